import { addressToString, parseCidr } from "../../../lib/net/cidr";
import { COREDNS_UID } from "../images/catalog";
import { withStubZones } from "../../../lib/instance-names/corefile";

/**
 * The cluster DNS of a local node: CoreDNS as kubeadm deploys it for Kubernetes 1.37
 * (k8s.io/kubernetes@v1.37.2 cmd/kubeadm/app/phases/addons/dns/manifests.go: ServiceAccount
 * `coredns`, ClusterRole and ClusterRoleBinding `system:coredns`, ConfigMap `coredns`,
 * Deployment `coredns`, Service `kube-dns` on the Service CIDR's tenth address, as kubeadm's
 * GetDNSIP picks it), so pods resolve Service names such as a ClusterIP proxy's
 * `hostForConsumer`. Where it differs from kubeadm, and why:
 * - no `forward` (and so no `loop`): names outside the cluster domain are answered SERVFAIL
 *   here and never sent to the host's resolver; tests send traffic only to what they created.
 *   The one `forward` is an environment's instance-names stub zone, to its names server's
 *   ClusterIP in this cluster (components/instance-names/), which applying this again keeps;
 * - the image is the one built on this machine (host/toolchain/coredns, host/local-clusters/images);
 * - instead of NET_BIND_SERVICE for root, the pod's own network namespace lets unprivileged
 *   ports start at 53 (a sysctl on the kubelet's safe list), so CoreDNS runs as a non-root user
 *   with every capability dropped;
 * - one replica and no control-plane toleration: a local cluster has one untainted node;
 * - the readiness probe asks every 2 s instead of every 10 s: `up` waits for it.
 * kubeadm 1.37 names the health ports (liveness-probe 8080, readiness-probe 8181) and
 * probes them by name; so does this.
 */

export const CLUSTER_DNS_NAMESPACE = "kube-system";
export const CLUSTER_DNS_SERVICE = "kube-dns";
export const CLUSTER_DNS_DEPLOYMENT = "coredns";
/** CoreDNS's `ready` plugin's port (kubeadm's readiness probe). */
export const COREDNS_READY_PORT = 8181;
/** CoreDNS's `health` plugin's port (kubeadm's liveness probe). */
export const COREDNS_HEALTH_PORT = 8080;

/** Where the cluster's Corefile is (its ConfigMap, as kubeadm names it). */
export const CLUSTER_DNS_CONFIGMAP_PATH = `/api/v1/namespaces/${CLUSTER_DNS_NAMESPACE}/configmaps/coredns`;

/**
 * The Corefile ConfigMap with an environment's instance-names stub zones added again
 * (lib/instance-names/corefile.ts): applying the node's own Corefile must not drop them.
 */
export function withCorefileStubs(
  configMap: Record<string, unknown>,
  stubs: { zones: string[]; serverAddress?: string },
): Record<string, unknown> {
  const data = configMap.data as { Corefile: string };
  return {
    ...configMap,
    data: { ...data, Corefile: withStubZones(data.Corefile, stubs.zones, stubs.serverAddress!) },
  };
}

/** The Service CIDR's tenth address, where kubeadm puts the cluster DNS Service. */
export function clusterDnsAddress(serviceCidr: string): string {
  const range = parseCidr(serviceCidr);
  const address = range.first + 10n;
  if (address > range.last)
    throw new Error(`the Service CIDR ${serviceCidr} is too small for a cluster DNS address (.10)`);
  return addressToString(address);
}

/** kubeadm's Corefile without `forward` and `loop` (see above). */
export function corefile(domain: string): string {
  return `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${domain} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    cache 30 {
       disable success ${domain}
       disable denial ${domain}
    }
    reload
    loadbalance
}
`;
}

export interface ClusterDnsSettings {
  /** The locally built CoreDNS image (imagePullPolicy: Never). */
  image: string;
  serviceCidr: string;
  domain: string;
}

/** An object and the API path server-side apply writes it to. */
export interface AddonObject {
  path: string;
  body: Record<string, unknown>;
}

const labels = { "k8s-app": "kube-dns" };

/** The API paths of the cluster DNS's objects, e.g. to delete them with the node. */
export function clusterDnsPaths(serviceCidr: string, domain: string): string[] {
  return clusterDnsObjects({ image: "", serviceCidr, domain }).map((o) => o.path);
}

/** The objects, in the order they are applied (RBAC and config before the pods that use them). */
export function clusterDnsObjects(s: ClusterDnsSettings): AddonObject[] {
  const ns = CLUSTER_DNS_NAMESPACE;
  const core = `/api/v1/namespaces/${ns}`;
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  return [
    {
      path: `${core}/serviceaccounts/coredns`,
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: ns } },
    },
    {
      path: `${rbac}/clusterroles/system:coredns`,
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "system:coredns" },
        rules: [
          {
            apiGroups: [""],
            resources: ["endpoints", "services", "pods", "namespaces"],
            verbs: ["list", "watch"],
          },
          { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
        ],
      },
    },
    {
      path: `${rbac}/clusterrolebindings/system:coredns`,
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "system:coredns" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
        subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: ns }],
      },
    },
    {
      path: `${core}/configmaps/coredns`,
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "coredns", namespace: ns },
        data: { Corefile: corefile(s.domain) },
      },
    },
    {
      path: `/apis/apps/v1/namespaces/${ns}/deployments/${CLUSTER_DNS_DEPLOYMENT}`,
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: CLUSTER_DNS_DEPLOYMENT, namespace: ns, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              priorityClassName: "system-cluster-critical",
              serviceAccountName: "coredns",
              // The node's resolv.conf is empty (kubeletConfig): CoreDNS forwards nowhere.
              dnsPolicy: "Default",
              securityContext: {
                runAsUser: COREDNS_UID,
                runAsGroup: COREDNS_UID,
                runAsNonRoot: true,
                sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "53" }],
              },
              containers: [
                {
                  name: "coredns",
                  image: s.image,
                  imagePullPolicy: "Never",
                  args: ["-conf", "/etc/coredns/Corefile"],
                  resources: { limits: { memory: "170Mi" }, requests: { cpu: "100m", memory: "70Mi" } },
                  volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
                  ports: [
                    { containerPort: 53, name: "dns", protocol: "UDP" },
                    { containerPort: 53, name: "dns-tcp", protocol: "TCP" },
                    { containerPort: 9153, name: "metrics", protocol: "TCP" },
                    { containerPort: COREDNS_HEALTH_PORT, name: "liveness-probe", protocol: "TCP" },
                    { containerPort: COREDNS_READY_PORT, name: "readiness-probe", protocol: "TCP" },
                  ],
                  livenessProbe: {
                    httpGet: { path: "/health", port: "liveness-probe", scheme: "HTTP" },
                    initialDelaySeconds: 60,
                    timeoutSeconds: 5,
                    failureThreshold: 5,
                  },
                  readinessProbe: {
                    httpGet: { path: "/ready", port: "readiness-probe", scheme: "HTTP" },
                    periodSeconds: 2,
                  },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    capabilities: { drop: ["ALL"] },
                    readOnlyRootFilesystem: true,
                  },
                },
              ],
              volumes: [
                {
                  name: "config-volume",
                  configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] },
                },
              ],
            },
          },
        },
      },
    },
    {
      path: `${core}/services/${CLUSTER_DNS_SERVICE}`,
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: {
          name: CLUSTER_DNS_SERVICE,
          namespace: ns,
          labels: { ...labels, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS" },
        },
        spec: {
          clusterIP: clusterDnsAddress(s.serviceCidr),
          selector: labels,
          ports: [
            { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
            { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
            { name: "metrics", port: 9153, protocol: "TCP", targetPort: 9153 },
          ],
        },
      },
    },
  ];
}
