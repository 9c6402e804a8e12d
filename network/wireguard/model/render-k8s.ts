import { createHash } from "node:crypto";
import { NFT_TABLE, renderGatewayNftables } from "./render-nftables";
import { ClientPlan, WireguardPlan } from "./planner";
import { isDnsLabel } from "../../../lib/net/dns";
import { type Exposure, type PolicyPeer, admittedPeers, serviceExposure } from "../../contract/exposure";
import {
  CLIENT_SHARED_DIR,
  CLIENT_TUNNEL_SCRIPT,
  FLOWS_DIR,
  FLOWS_INCLUDE,
  clientAgentScript,
  configServerArgs,
} from "./cluster-config";

/**
 * Kubernetes objects for both ends of the tunnel, as plain manifests. Secrets carry
 * placeholders: the component fills `stringData` from secret Outputs, so no private key
 * ever passes through these functions.
 *
 * Gateway (data-service side): one pod with the WireGuard interface and the nftables
 * filter, behind a UDP Service. It re-reads its Secret and ConfigMap every few seconds and
 * applies changes with `wg syncconf` and an atomic `nft -f`, so adding a peer or a flow
 * never restarts the pod and never drops the sessions of other app clusters.
 *
 * Client (app cluster): one pod with the tunnel and one TCP forwarder per connection, and
 * one Service per connection; its DNS name is the connection's `hostForConsumer`.
 */

export const CONFIG_PLACEHOLDER = "<filled by WireguardTunnel from a secret output>";
export const DEFAULT_WIREGUARD_IMAGE = "lscr.io/linuxserver/wireguard:1.0.20210914";
export const DEFAULT_FORWARDER_IMAGE = "docker.io/alpine/socat:1.8.0.0";
/**
 * The forwarders run as nobody. They listen on the connection's own port, which may be below
 * 1024: the client pod sets net.ipv4.ip_unprivileged_port_start=0, a sysctl Kubernetes counts
 * as safe (namespaced to the pod's network), rather than granting CAP_NET_BIND_SERVICE.
 */
export const FORWARDER_UID = 65534;

export interface K8sRenderOptions {
  /** Base name of every object (a DNS-1123 label); Service names are `<name>-<connection>`. */
  name: string;
  gatewayNamespace: string;
  clientNamespace: string;
  /** Image with wg, wg-quick and nft. */
  image?: string;
  /** Image whose entrypoint is socat. */
  forwarderImage?: string;
  gatewayServiceType?: "ClusterIP" | "NodePort" | "LoadBalancer";
  /** Who may reach the gateway Service (source ranges, internal or public); see network/contract/exposure.ts. */
  gatewayExposure?: Exposure;
  /** Annotate workloads with pulumi.com/skipAwait (clusters without a kubelet never get ready). */
  skipAwait?: boolean;
  clusterDomain?: string;
  /** The key rotation trigger; part of the client pod template so a rotation restarts the pod. */
  keyRotation?: string;
  /**
   * The bridge adds the connections at run time (cluster-config.ts): the gateway gets the
   * flows ConfigMap and the forwarder-list server on this port, each client an agent that
   * follows its list and a headless Service every one of its connections is reached through.
   */
  bridgeConnections?: { configPort: number };
}

type Labels = Record<string, string>;

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Labels;
  annotations?: Record<string, string>;
}

export interface SecretManifest {
  apiVersion: "v1";
  kind: "Secret";
  metadata: ObjectMeta;
  type: "Opaque";
  stringData: Record<string, string>;
}

export interface ConfigMapManifest {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: ObjectMeta;
  data: Record<string, string>;
}

export interface ServiceManifest {
  apiVersion: "v1";
  kind: "Service";
  metadata: ObjectMeta;
  spec: {
    type: string;
    clusterIP?: "None";
    loadBalancerSourceRanges?: string[];
    externalTrafficPolicy?: "Local";
    selector: Labels;
    ports: { name: string; protocol: "TCP" | "UDP"; port: number; targetPort: number }[];
  };
}

/** A NetworkPolicy that admits the listed peers on the listed ports to the selected pods, nothing else in. */
export interface NetworkPolicyManifest {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: ObjectMeta;
  spec: {
    podSelector: { matchLabels: Labels };
    policyTypes: ["Ingress"];
    ingress: {
      /** Omitted: from anywhere. */
      from?: PolicyPeer[];
      /** A port omitted: every port of that protocol. */
      ports: { protocol: "TCP" | "UDP"; port?: number }[];
    }[];
  };
}

export interface ProbeSpec {
  exec?: { command: string[] };
  tcpSocket?: { port: number };
  periodSeconds: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

export interface ContainerSecurityContext {
  capabilities: { drop: string[]; add?: string[] };
  allowPrivilegeEscalation: false;
  readOnlyRootFilesystem: true;
  runAsUser?: number;
  runAsNonRoot?: boolean;
}

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name: string; containerPort: number; protocol: string }[];
  securityContext: ContainerSecurityContext;
  readinessProbe: ProbeSpec;
  volumeMounts?: { name: string; mountPath: string; readOnly: boolean }[];
}

export interface VolumeSpec {
  name: string;
  secret?: { secretName: string; defaultMode: number };
  configMap?: { name: string };
  hostPath?: { path: string; type: "CharDevice" };
  emptyDir?: { medium?: "Memory" };
}

export interface DeploymentManifest {
  apiVersion: "apps/v1";
  kind: "Deployment";
  metadata: ObjectMeta;
  spec: {
    replicas: number;
    strategy: { type: "Recreate" };
    selector: { matchLabels: Labels };
    template: {
      metadata: { labels: Labels; annotations?: Record<string, string> };
      spec: {
        automountServiceAccountToken: false;
        securityContext?: { sysctls: { name: string; value: string }[] };
        containers: ContainerSpec[];
        volumes: VolumeSpec[];
      };
    };
  };
}

export interface GatewayManifests {
  secret: SecretManifest;
  rules: ConfigMapManifest;
  /** The ConfigMap the bridge publishes each group's flows and forwarder list in (bridgeConnections). */
  flows?: ConfigMapManifest;
  deployment: DeploymentManifest;
  service: ServiceManifest;
}

export interface ConsumerEndpoint {
  hostForConsumer: string;
  port: number;
}

export interface ClientManifests {
  secret: SecretManifest;
  deployment: DeploymentManifest;
  /** Headless, in front of the client pod: the hostForConsumer of bridge-made connections. */
  headless?: ServiceManifest;
  /** One per connection, in the plan's connection order. */
  services: ServiceManifest[];
  /** What each connection's XTCPConnection status reports. */
  endpoints: Record<string, ConsumerEndpoint>;
}

function label(value: string, field: string): string {
  if (!isDnsLabel(value)) {
    throw new Error(
      `${field} ${JSON.stringify(value)} must be a DNS-1123 label (lowercase letters, digits, '-', at most 63 characters); shorten the tunnel or connection name`,
    );
  }
  return value;
}

/** The gateway's objects' base name; its flows ConfigMap is `<this>-flows` (gatewayFlowsName). */
function gatewayName(opts: Pick<K8sRenderOptions, "name">): string {
  return label(`${label(opts.name, "name")}-gateway`, "gateway name");
}

/** The flows ConfigMap of a tunnel named `tunnel` (bridgeConnections; a gateway VM's too). */
export function gatewayFlowsName(tunnel: string): string {
  return `${gatewayName({ name: tunnel })}-flows`;
}

/**
 * The tunnel and gateway a flows ConfigMap name belongs to (gatewayFlowsName read back: the
 * bridge's settings name only the ConfigMap), or undefined for a name it did not make.
 */
export function gatewayOfFlows(flowsName: string): { tunnel: string; gateway: string } | undefined {
  const tunnel = /^(.+)-gateway-flows$/.exec(flowsName)?.[1];
  return tunnel === undefined ? undefined : { tunnel, gateway: gatewayName({ name: tunnel }) };
}

/** Each client's objects' name: its Secret, Deployment and headless Service. */
function clientName(opts: Pick<K8sRenderOptions, "name">): string {
  return label(`${label(opts.name, "name")}-client`, "client name");
}

function labels(opts: K8sRenderOptions, component: string, appCluster?: string): Labels {
  return {
    "app.kubernetes.io/name": "klutch-wireguard",
    "app.kubernetes.io/instance": opts.name,
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/managed-by": "pulumi",
    ...(appCluster ? { "klutch.anynines.com/app-cluster": appCluster } : {}),
  };
}

function meta(name: string, namespace: string, lbls: Labels, skipAwait = false): ObjectMeta {
  return {
    name,
    namespace,
    labels: lbls,
    ...(skipAwait ? { annotations: { "pulumi.com/skipAwait": "true" } } : {}),
  };
}

/** Shell run by the gateway container: bring the tunnel up, then apply config changes live. */
const GATEWAY_SCRIPT = [
  "set -eu",
  "install -m 0600 /etc/klutch/wireguard/wg0.conf /etc/wireguard/wg0.conf",
  "wg-quick up wg0",
  "nft -f /etc/klutch/rules/rules.nft",
  "trap 'wg-quick down wg0; exit 0' TERM INT",
  // The bridge's flow files too (bridgeConnections; none otherwise): the rules include them.
  `sum() { cat /etc/klutch/wireguard/wg0.setconf /etc/klutch/rules/rules.nft ${FLOWS_INCLUDE} 2>/dev/null | sha256sum; }`,
  'last="$(sum)"',
  "while true; do",
  "  sleep 5 & wait $!",
  '  now="$(sum)"',
  '  if [ "$now" != "$last" ]; then',
  '    wg syncconf wg0 /etc/klutch/wireguard/wg0.setconf && nft -f /etc/klutch/rules/rules.nft && last="$now"',
  "  fi",
  "done",
].join("\n");

/** Shell run by the client's tunnel container; its config changes come with a new pod. */
const CLIENT_SCRIPT = [
  "set -eu",
  "install -m 0600 /etc/klutch/wireguard/wg0.conf /etc/wireguard/wg0.conf",
  "wg-quick up wg0",
  "trap 'wg-quick down wg0; exit 0' TERM INT",
  "while true; do sleep 3600 & wait $!; done",
].join("\n");

/**
 * The tunnel container's privileges, no more than wireguard-go and nft use:
 * - /dev/net/tun, mounted from the node: wireguard-go opens it to create the interface
 *   (golang.zx2c4.com/wireguard tun/tun_linux.go: `cloneDevicePath = "/dev/net/tun"`, then the
 *   TUNSETIFF ioctl; Debian 12 packages 0.0.20220316). runc up to 1.1 (Debian 12: 1.1.5, what
 *   local nodes run) allows the tun/tap device (c 10:200) in every container's device cgroup
 *   (libcontainer/configs/device_defaults.go, "tuntap"); runc 1.2 dropped that rule
 *   (opencontainers/runc#3468), so there the node needs a device plugin that hands it out.
 * - CAP_NET_ADMIN only: TUNSETIFF on that device, the address, link and routes (wg-quick's
 *   `ip`), the UAPI configuration, and loading the nftables filter all need it; every other
 *   capability is dropped, the root file system is read-only.
 * - writable: /etc/wireguard (the config copy wg-quick reads), /var/run/wireguard (the UAPI
 *   socket, ipc/uapi_linux.go `socketDirectory`), /tmp (bash's here-documents).
 */
const TUNNEL_SECURITY: ContainerSecurityContext = {
  capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] },
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
};

const TUNNEL_VOLUMES: VolumeSpec[] = [
  { name: "tun", hostPath: { path: "/dev/net/tun", type: "CharDevice" } },
  { name: "etc-wireguard", emptyDir: { medium: "Memory" } },
  { name: "uapi", emptyDir: { medium: "Memory" } },
  { name: "tmp", emptyDir: { medium: "Memory" } },
];

function tunnelContainer(
  image: string,
  script: string,
  ports: { containerPort: number; protocol: string }[],
  readiness: string,
): ContainerSpec & { volumeMounts: NonNullable<ContainerSpec["volumeMounts"]> } {
  return {
    name: "wireguard",
    image,
    command: ["/bin/sh", "-c", script],
    ...(ports.length > 0 ? { ports: ports.map((p) => ({ name: "wireguard", ...p })) } : {}),
    securityContext: TUNNEL_SECURITY,
    readinessProbe: execProbe(["/bin/sh", "-c", readiness]),
    volumeMounts: [
      { name: "wireguard", mountPath: "/etc/klutch/wireguard", readOnly: true },
      { name: "tun", mountPath: "/dev/net/tun", readOnly: false },
      { name: "etc-wireguard", mountPath: "/etc/wireguard", readOnly: false },
      { name: "uapi", mountPath: "/var/run/wireguard", readOnly: false },
      { name: "tmp", mountPath: "/tmp", readOnly: false },
    ],
  };
}

/** Forwarders and the forwarder-list server need nothing but sockets: no capability, no root. */
const NOBODY: ContainerSecurityContext = {
  capabilities: { drop: ["ALL"] },
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsUser: FORWARDER_UID,
  runAsNonRoot: true,
};

/**
 * An exec probe every 3 s. The kubelet's default timeout of 1 s counts a probe as failed when
 * the runtime is slow to start the exec on a busy node (the process start, not the check, takes
 * the time), and three such misses take a working tunnel out of its Service: 5 s covers a loaded
 * node, and a real failure still shows within one period.
 */
function execProbe(command: string[]): ProbeSpec {
  return { exec: { command }, periodSeconds: 3, timeoutSeconds: 5 };
}

/** Ready once the interface listens and the filter is loaded (the gateway forwards nothing before). */
const GATEWAY_READY = `wg show wg0 listen-port >/dev/null && nft list table inet ${NFT_TABLE} >/dev/null`;
/** Ready once the client has shaken hands with the gateway (its one peer's handshake time is set). */
const CLIENT_READY = 'wg show wg0 latest-handshakes | { read -r peer at && [ "$at" != 0 ]; }';

/**
 * The gateway's UDP Service. It needs only the listen port, not the plan, because the
 * plan may need the Service's load balancer address as the endpoint clients dial.
 */
export function renderGatewayService(listenPort: number, opts: K8sRenderOptions): ServiceManifest {
  const name = gatewayName(opts);
  const lbls = labels(opts, "gateway");
  const type = opts.gatewayServiceType ?? "LoadBalancer";
  const { annotations, ...fields } = opts.gatewayExposure
    ? serviceExposure(opts.gatewayExposure, type)
    : { annotations: {} };
  const metadata = meta(name, opts.gatewayNamespace, lbls, opts.skipAwait);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata:
      Object.keys(annotations).length > 0
        ? { ...metadata, annotations: { ...metadata.annotations, ...annotations } }
        : metadata,
    spec: {
      type,
      ...fields,
      selector: lbls,
      ports: [{ name: "wireguard", protocol: "UDP", port: listenPort, targetPort: listenPort }],
    },
  };
}

/**
 * The gateway pod's ingress: WireGuard's UDP port, from whom the gateway's exposure admits (its
 * Service's source ranges; with ClusterIP, the data-service cluster's pods), and nothing else.
 * The forwarder-list server is reached through the tunnel, inside the pod, and its probes are
 * exec probes, so no other port needs to be open. The Service keeps the client's address
 * (externalTrafficPolicy Local, network/contract/exposure.ts), so the policy sees the real source.
 */
export function renderGatewayNetworkPolicy(
  listenPort: number,
  opts: K8sRenderOptions,
): NetworkPolicyManifest {
  const lbls = labels(opts, "gateway");
  const type = opts.gatewayServiceType ?? "LoadBalancer";
  const exposure = opts.gatewayExposure;
  // Without an exposure (only a ClusterIP gateway may lack one: exposureArgProblem) no source is named.
  const from = exposure ? admittedPeers(exposure, type) : undefined;
  return ingressPolicy(meta(gatewayName(opts), opts.gatewayNamespace, lbls), [
    { ...(from ? { from } : {}), ports: [{ protocol: "UDP", port: listenPort }] },
  ]);
}

/** A NetworkPolicy selecting the pods labelled as the object is, admitting `ingress` only. */
function ingressPolicy(
  metadata: ObjectMeta,
  ingress: NetworkPolicyManifest["spec"]["ingress"],
): NetworkPolicyManifest {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata,
    spec: { podSelector: { matchLabels: metadata.labels }, policyTypes: ["Ingress"], ingress },
  };
}

/**
 * A client pod's ingress: TCP from the app cluster's own pods, which reach its forwarders through
 * the connections' Services; nothing from outside the cluster, and no UDP (the tunnel dials out
 * to the gateway, whose answers are replies). Every TCP port, because the bridge's forwarders
 * take their ports at run time (bridgeConnections).
 */
export function renderClientNetworkPolicy(appCluster: string, opts: K8sRenderOptions): NetworkPolicyManifest {
  return ingressPolicy(meta(clientName(opts), opts.clientNamespace, labels(opts, "client", appCluster)), [
    { from: [{ namespaceSelector: {} }], ports: [{ protocol: "TCP" }] },
  ]);
}

export function renderGatewayManifests(plan: WireguardPlan, opts: K8sRenderOptions): GatewayManifests {
  const name = gatewayName(opts);
  const lbls = labels(opts, "gateway");
  const image = opts.image ?? DEFAULT_WIREGUARD_IMAGE;
  const ns = opts.gatewayNamespace;
  const container = tunnelContainer(
    image,
    GATEWAY_SCRIPT,
    [{ containerPort: plan.listenPort, protocol: "UDP" }],
    GATEWAY_READY,
  );
  container.volumeMounts.push({ name: "rules", mountPath: "/etc/klutch/rules", readOnly: true });
  const bridge = opts.bridgeConnections;
  if (bridge) container.volumeMounts.push({ name: "flows", mountPath: FLOWS_DIR, readOnly: true });
  // The forwarder-list server: nobody, no capability, reads the flows ConfigMap only.
  const configServer: ContainerSpec[] = bridge
    ? [
        {
          name: "forwarder-lists",
          image: opts.forwarderImage ?? DEFAULT_FORWARDER_IMAGE,
          command: ["socat"],
          args: configServerArgs(bridge.configPort),
          ports: [{ name: "lists", containerPort: bridge.configPort, protocol: "TCP" }],
          securityContext: NOBODY,
          // From the pod's loopback: the filter admits the list port from the tunnel and lo only,
          // and a probe the filter dropped would take the gateway out of its Service.
          readinessProbe: execProbe([
            "socat",
            "-u",
            "/dev/null",
            `TCP:127.0.0.1:${bridge.configPort},connect-timeout=2`,
          ]),
          volumeMounts: [{ name: "flows", mountPath: FLOWS_DIR, readOnly: true }],
        },
      ]
    : [];
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta(name, ns, lbls),
      type: "Opaque",
      stringData: { "wg0.conf": CONFIG_PLACEHOLDER, "wg0.setconf": CONFIG_PLACEHOLDER },
    },
    // Not a Secret: the filter holds no key, and reviewers should see its diff in a preview.
    rules: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta(`${name}-rules`, ns, lbls),
      data: {
        "rules.nft": renderGatewayNftables(plan, {
          interfaceName: "wg0",
          masquerade: true,
          ...(bridge ? { configPort: bridge.configPort, include: FLOWS_INCLUDE } : {}),
        }),
      },
    },
    ...(bridge ? { flows: renderGatewayFlows(opts) } : {}),
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(name, ns, lbls, opts.skipAwait),
      spec: {
        // One replica: WireGuard sessions live in one process; two behind one UDP Service would fight.
        replicas: 1,
        strategy: { type: "Recreate" },
        selector: { matchLabels: lbls },
        template: {
          metadata: { labels: lbls },
          spec: {
            automountServiceAccountToken: false,
            // ip_forward is not a "safe" sysctl: the kubelet must allow it (--allowed-unsafe-sysctls).
            securityContext: { sysctls: [{ name: "net.ipv4.ip_forward", value: "1" }] },
            containers: [container, ...configServer],
            volumes: [
              { name: "wireguard", secret: { secretName: name, defaultMode: 0o400 } },
              { name: "rules", configMap: { name: `${name}-rules` } },
              ...(bridge ? [{ name: "flows", configMap: { name: gatewayFlowsName(opts.name) } }] : []),
              ...TUNNEL_VOLUMES,
            ],
          },
        },
      },
    },
    service: renderGatewayService(plan.listenPort, opts),
  };
}

/** A short digest of non-secret data, for pod template annotations. */
function digest(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

function clientPlan(plan: WireguardPlan, appCluster: string): ClientPlan {
  const c = plan.clients.find((x) => x.appCluster === appCluster);
  if (!c) throw new Error(`appCluster ${JSON.stringify(appCluster)} has no client in this plan`);
  return c;
}

export function renderClientManifests(
  plan: WireguardPlan,
  appCluster: string,
  opts: K8sRenderOptions,
): ClientManifests {
  const c = clientPlan(plan, appCluster);
  const name = clientName(opts);
  const lbls = labels(opts, "client", appCluster);
  const ns = opts.clientNamespace;
  const domain = opts.clusterDomain ?? "cluster.local";
  const forwarders = c.connections.map((conn): ContainerSpec => ({
    name: label(`fwd-${conn.name}`, `forwarder container of connection ${conn.name}`),
    image: opts.forwarderImage ?? DEFAULT_FORWARDER_IMAGE,
    // Named, not the image's entrypoint: the local image serves the tunnel and the forwarders.
    command: ["socat"],
    // The tunnel routes the data-service host, so the forwarder dials the real host:port.
    args: [
      `TCP-LISTEN:${conn.forwarderPort},fork,reuseaddr`,
      `TCP:${conn.instanceHost}:${conn.port},connect-timeout=5`,
    ],
    ports: [{ name: "tcp", containerPort: conn.forwarderPort, protocol: "TCP" }],
    // A forwarder needs nothing but a socket: no capability, no root.
    securityContext: NOBODY,
    readinessProbe: { tcpSocket: { port: conn.forwarderPort }, periodSeconds: 3 },
  }));
  const services: ServiceManifest[] = c.connections.map((conn) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(
      label(`${opts.name}-${conn.name}`, `Service name of connection ${conn.name}`),
      ns,
      { ...lbls, "klutch.anynines.com/connection": conn.name },
      opts.skipAwait,
    ),
    spec: {
      type: "ClusterIP",
      selector: lbls,
      ports: [{ name: "tcp", protocol: "TCP", port: conn.port, targetPort: conn.forwarderPort }],
    },
  }));
  const bridge = opts.bridgeConnections;
  // The agent fetches the list and runs the forwarders; the tunnel container routes its hosts.
  const agent: ContainerSpec[] = bridge
    ? [
        {
          name: "forwarders",
          image: opts.forwarderImage ?? DEFAULT_FORWARDER_IMAGE,
          command: ["/bin/sh", "-c", clientAgentScript(plan.gateway.tunnelAddress, bridge.configPort)],
          securityContext: NOBODY,
          // Ready once it has its list from the gateway: the tunnel and the list server work.
          readinessProbe: execProbe(["/bin/sh", "-c", `test -f ${CLIENT_SHARED_DIR}/hosts`]),
          volumeMounts: [
            { name: "shared", mountPath: CLIENT_SHARED_DIR, readOnly: false },
            { name: "agent-tmp", mountPath: "/tmp", readOnly: false },
          ],
        },
      ]
    : [];
  const tunnel = tunnelContainer(
    opts.image ?? DEFAULT_WIREGUARD_IMAGE,
    bridge ? CLIENT_TUNNEL_SCRIPT : CLIENT_SCRIPT,
    [],
    CLIENT_READY,
  );
  // Read-write: it answers the agent's hosts with the ones it has routed.
  if (bridge) tunnel.volumeMounts.push({ name: "shared", mountPath: CLIENT_SHARED_DIR, readOnly: false });
  const headless = bridge ? renderClientHeadlessService(appCluster, opts) : undefined;
  const endpoints = Object.fromEntries(
    c.connections.map((conn, i) => [
      conn.name,
      { hostForConsumer: `${services[i]?.metadata.name ?? ""}.${ns}.svc.${domain}`, port: conn.port },
    ]),
  );
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta(name, ns, lbls),
      type: "Opaque",
      stringData: { "wg0.conf": CONFIG_PLACEHOLDER },
    },
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(name, ns, lbls, opts.skipAwait),
      spec: {
        replicas: 1,
        strategy: { type: "Recreate" },
        selector: { matchLabels: lbls },
        template: {
          metadata: {
            labels: lbls,
            // wg-quick reads its file once: a new address, endpoint, route or key must restart the pod.
            annotations: {
              "klutch.anynines.com/tunnel-config": digest({
                interface: c.interface,
                rotation: opts.keyRotation ?? "",
              }),
            },
          },
          spec: {
            automountServiceAccountToken: false,
            securityContext: { sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }] },
            containers: [tunnel, ...forwarders, ...agent],
            volumes: [
              { name: "wireguard", secret: { secretName: name, defaultMode: 0o400 } },
              ...TUNNEL_VOLUMES,
              ...(bridge
                ? [
                    { name: "shared", emptyDir: { medium: "Memory" as const } },
                    { name: "agent-tmp", emptyDir: { medium: "Memory" as const } },
                  ]
                : []),
            ],
          },
        },
      },
    },
    services,
    ...(headless ? { headless } : {}),
    endpoints,
  };
}

/**
 * The gateway's flows ConfigMap (bridgeConnections), empty: every key in it is a bridge
 * group's, applied with a field manager of its own. Needs no plan, so it exists whatever
 * the gateway's endpoint is. Labelled part of Klutch as the groups' own objects are, so the
 * bridge's drift watch (lib/bridge/drift.ts DRIFT_SELECTOR) sees a hand change a group's keys.
 */
export function renderGatewayFlows(opts: K8sRenderOptions): ConfigMapManifest {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(gatewayFlowsName(opts.name), opts.gatewayNamespace, {
      ...labels(opts, "gateway"),
      "app.kubernetes.io/part-of": "klutch",
    }),
    data: {},
  };
}

/** A client's headless Service (bridgeConnections); needs no plan. */
export function renderClientHeadlessService(appCluster: string, opts: K8sRenderOptions): ServiceManifest {
  const lbls = labels(opts, "client", appCluster);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(clientName(opts), opts.clientNamespace, lbls),
    // No ports: the name resolves to the pod itself, whose forwarders listen on theirs.
    spec: { type: "ClusterIP", clusterIP: "None", selector: lbls, ports: [] },
  };
}

/** The DNS name of a client's headless Service: every bridge-made connection's hostForConsumer. */
export function clientHost(
  opts: Pick<K8sRenderOptions, "name" | "clientNamespace" | "clusterDomain">,
): string {
  return `${clientName(opts)}.${opts.clientNamespace}.svc.${opts.clusterDomain ?? "cluster.local"}`;
}
