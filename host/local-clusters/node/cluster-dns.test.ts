import { strict as assert } from "node:assert";
import {
  CLUSTER_DNS_CONFIGMAP_PATH,
  clusterDnsAddress,
  clusterDnsObjects,
  clusterDnsPaths,
  corefile,
  withCorefileStubs,
} from "./cluster-dns";
import { currentStubZones, withStubZones } from "../../../lib/instance-names/corefile";

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  spec?: {
    clusterIP?: string;
    template?: {
      spec: {
        serviceAccountName: string;
        dnsPolicy: string;
        securityContext: { runAsNonRoot: boolean; sysctls: { name: string; value: string }[] };
        containers: {
          image: string;
          imagePullPolicy: string;
          readinessProbe: { httpGet: { port: number | string; path: string } };
          livenessProbe: { httpGet: { port: number | string; path: string } };
          ports: { containerPort: number; name: string; protocol: string }[];
          securityContext: {
            capabilities: { drop: string[]; add?: string[] };
            readOnlyRootFilesystem: boolean;
          };
        }[];
      };
    };
  };
  data?: Record<string, string>;
};

const objects = clusterDnsObjects({
  image: "klutch.local/coredns:1.15.0-abc",
  serviceCidr: "10.96.0.0/16",
  domain: "cluster.local",
});
const byKind = (kind: string) => objects.map((o) => o.body as Obj).find((o) => o.kind === kind)!;

describe("local node cluster DNS (CoreDNS as kubeadm deploys it)", () => {
  it("puts the kube-dns Service on the Service CIDR's tenth address, as kubeadm's GetDNSIP", () => {
    assert.equal(clusterDnsAddress("10.96.0.0/16"), "10.96.0.10");
    assert.equal(clusterDnsAddress("10.100.8.0/24"), "10.100.8.10");
    assert.throws(() => clusterDnsAddress("10.0.0.0/29"), /too small for a cluster DNS address/);
    assert.equal(byKind("Service").spec?.clusterIP, "10.96.0.10");
    assert.equal(byKind("Service").metadata.name, "kube-dns");
  });

  it("grants CoreDNS exactly kubeadm's rules: list and watch what the kubernetes plugin reads", () => {
    assert.deepEqual(byKind("ClusterRole").rules, [
      {
        apiGroups: [""],
        resources: ["endpoints", "services", "pods", "namespaces"],
        verbs: ["list", "watch"],
      },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ]);
  });

  it("answers the cluster domain and forwards nothing to another resolver", () => {
    const conf = corefile("cluster.local");
    assert.match(conf, /kubernetes cluster\.local in-addr\.arpa ip6\.arpa \{/);
    assert.match(conf, /^\s+ready$/m);
    assert.doesNotMatch(conf, /forward|loop/);
    assert.equal(byKind("ConfigMap").data?.Corefile, conf);
  });

  it("runs the local image as non-root with no capability: port 53 is unprivileged in its own network namespace", () => {
    const pod = byKind("Deployment").spec!.template!.spec;
    const [c] = pod.containers;
    assert.equal(c?.image, "klutch.local/coredns:1.15.0-abc");
    assert.equal(c?.imagePullPolicy, "Never");
    assert.deepEqual(c?.securityContext.capabilities, { drop: ["ALL"] });
    assert.equal(c?.securityContext.readOnlyRootFilesystem, true);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.deepEqual(pod.securityContext.sysctls, [
      { name: "net.ipv4.ip_unprivileged_port_start", value: "53" },
    ]);
    // As kubeadm 1.37 does: the probes name their ports, declared on the container.
    assert.deepEqual(c?.readinessProbe.httpGet, { path: "/ready", port: "readiness-probe", scheme: "HTTP" });
    assert.deepEqual(c?.livenessProbe.httpGet, { path: "/health", port: "liveness-probe", scheme: "HTTP" });
    assert.deepEqual(
      c?.ports.filter((p) => p.name.endsWith("-probe")),
      [
        { containerPort: 8080, name: "liveness-probe", protocol: "TCP" },
        { containerPort: 8181, name: "readiness-probe", protocol: "TCP" },
      ],
    );
    assert.equal(pod.serviceAccountName, "coredns");
    assert.equal(pod.dnsPolicy, "Default");
  });

  it("applies RBAC and the Corefile before the Deployment, to each object's own API path", () => {
    assert.deepEqual(
      objects.map((o) => o.path),
      [
        "/api/v1/namespaces/kube-system/serviceaccounts/coredns",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:coredns",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:coredns",
        "/api/v1/namespaces/kube-system/configmaps/coredns",
        "/apis/apps/v1/namespaces/kube-system/deployments/coredns",
        "/api/v1/namespaces/kube-system/services/kube-dns",
      ],
    );
    assert.deepEqual(
      clusterDnsPaths("10.96.0.0/16", "cluster.local"),
      objects.map((o) => o.path),
    );
  });

  it("applied again, keeps an environment's instance-names stub zones in the Corefile", () => {
    const configMap = objects.find((o) => o.path === CLUSTER_DNS_CONFIGMAP_PATH)!.body;
    const live = withStubZones(corefile("cluster.local"), ["a9s.internal"], "10.96.0.53");
    const stubs = currentStubZones(live)!;
    const again = withCorefileStubs(configMap, stubs) as { data: { Corefile: string } };
    assert.equal(again.data.Corefile, live);
    assert.deepEqual(currentStubZones(again.data.Corefile), {
      zones: ["a9s.internal"],
      serverAddress: "10.96.0.53",
    });
  });
});
