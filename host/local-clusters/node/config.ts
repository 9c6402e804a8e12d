import { stringify } from "yaml";
import type { NodeLayout, NodeNames } from "./layout";

/**
 * The configuration files of a local node, rendered from its layout and addresses. Pure, so
 * the unit tests check every setting this machine's facts require (see docs/local-stack.md, "Nodes").
 */

export interface NodeSettings {
  nodeName: string;
  /** The node's own address, in its network namespace (kubelet refuses a loopback one). */
  nodeAddress: string;
  /** The host end of the node's link; the API server is reached there (DNAT to loopback). */
  hostAddress: string;
  apiServerPort: number;
  /** The pods' range on this node (the bridge's host-local IPAM hands out addresses from it). */
  podCidr: string;
  /** The CRI sandbox image, imported locally (pulling is impossible here). */
  sandboxImage: string;
  caCert: string;
  /** The cluster DNS Service's address (cluster-dns.ts), written into every pod's resolv.conf. */
  clusterDns: string;
  clusterDomain: string;
  /** The local package registry as the node reaches it, and the CA its certificate is from. */
  registry?: { address: string; caCert: string };
}

/** Where the CNI plugins of the Debian package live (not upstream's /opt/cni/bin). */
export const CNI_BIN_DIR = "/usr/lib/cni";
export const KUBELET_PORT = 10250;
export const KUBELET_HEALTHZ_PORT = 10248;
export const PROXY_HEALTHZ_PORT = 10256;
export const SCHEDULER_PORT = 10259;

const toml = (value: string) => JSON.stringify(value);

/**
 * containerd 1.6 (Debian bookworm), CRI plugin, config version 2. Everything it writes lives
 * under the node's directory, so several nodes (and a system containerd) never share state.
 */
export function containerdConfig(layout: NodeLayout, s: NodeSettings): string {
  const cri = `plugins."io.containerd.grpc.v1.cri"`;
  return `# Rendered by host/local-clusters/node/config.ts; rewritten on every node start.
version = 2
root = ${toml(layout.containerdRoot)}
state = ${toml(layout.containerdState)}
# Snapshotters that cannot work here (or are not needed) stay off: fewer start-up errors.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${toml(layout.containerdSocket)}

[ttrpc]
  address = ${toml(`${layout.containerdSocket}.ttrpc`)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${toml(`${layout.containerdRoot}/opt`)}

[${cri}]
  sandbox_image = ${toml(s.sandboxImage)}
  # This VM refuses a negative /proc/self/oom_score_adj (checked here: EACCES; only crun's error
  # says so clearly), which the kubelet asks for Guaranteed pods; capped at containerd's own 0.
  restrict_oom_score_adj = true
  # Pod network namespaces are bind-mounted under the state dir, not /run/netns, so stopping
  # the node finds and unmounts every one of them there.
  netns_mounts_under_state_dir = true
  # No AppArmor on this kernel (no /sys/module/apparmor), and no SELinux.
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [${cri}.containerd.runtimes.runc.options]
        # runc, not crun: crun refuses this machine's hybrid cgroup layout ("cgroups in hybrid
        # mode not supported"). cgroupfs, like the kubelet (no systemd runs here).
        BinaryName = "runc"
        SystemdCgroup = false
        Root = ${toml(`${layout.containerdState}/runc`)}

  [${cri}.registry]
    # Registry hosts (host/local-clusters/registry/config.ts containerdHostsToml): the local package
    # registry's CA, and nothing else: with no directory for a host, containerd's defaults hold.
    config_path = ${toml(layout.registryHostsDir)}

  [${cri}.cni]
    bin_dir = ${toml(CNI_BIN_DIR)}
    conf_dir = ${toml(layout.cniConfDir)}
    max_conf_num = 1
`;
}

/** bridge + host-local + portmap: one bridge in the node's namespace, pods on the pod CIDR. */
export function cniConfig(layout: NodeLayout, s: NodeSettings): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "klutch-pods",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          // Masquerade traffic leaving the pod range (to the host end of the node's link).
          ipMasq: true,
          // A pod that reaches itself through a Service needs the bridge to send it back.
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: s.podCidr }]],
            routes: [{ dst: "0.0.0.0/0" }],
            dataDir: layout.cniIpamDir,
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * KubeletConfiguration for Kubernetes 1.37 on this machine: cgroup v1 (hybrid) with the
 * cgroupfs driver, pods under the node's own cgroup root, no static pods, image garbage
 * collection off (the images cannot be pulled again), disk eviction only when nearly full.
 */
export function kubeletConfig(layout: NodeLayout, names: NodeNames, s: NodeSettings): string {
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // 1.37 refuses cgroup v1 unless told otherwise (failCgroupV1 defaults to true:
    // pkg/kubelet/apis/config/v1beta1/defaults.go); this VM has v1 controllers (v2 only as
    // /sys/fs/cgroup/unified, with no controllers). Told, it runs and posts a CgroupV1 warning
    // event: v1 is deprecated upstream and will be removed in a later release.
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: names.cgroupRoot,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    address: s.nodeAddress,
    port: KUBELET_PORT,
    readOnlyPort: 0,
    healthzBindAddress: s.nodeAddress,
    healthzPort: KUBELET_HEALTHZ_PORT,
    // The API server reaches the kubelet (logs, exec) with a client cert of the cluster's CA.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: s.caCert },
    },
    authorization: { mode: "Webhook" },
    podLogsDir: layout.podLogsDir,
    staticPodPath: "",
    clusterDomain: s.clusterDomain,
    clusterDNS: [s.clusterDns],
    // Pods get the cluster DNS only (ClusterFirst), never the host's resolver: CoreDNS here
    // answers the cluster domain and forwards nothing (cluster-dns.ts).
    resolvConf: "",
    // The kubelet would set its own oom_score_adj to -999, which this VM refuses.
    oomScoreAdj: 0,
    failSwapOn: false,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "1%",
      "nodefs.inodesFree": "1%",
      "imagefs.available": "1%",
      "imagefs.inodesFree": "1%",
    },
    // A dev machine's disk is shared with everything else; only a full disk should stop pods.
    evictionPressureTransitionPeriod: "10s",
    serializeImagePulls: false,
    // The WireGuard gateway pod forwards tunnel traffic (network/wireguard/model/render-k8s.ts);
    // ip_forward is per network namespace but not on the kubelet's "safe" list.
    allowedUnsafeSysctls: ["net.ipv4.ip_forward"],
    registerNode: true,
    // Faster reaction in tests and on `up` (defaults are 10 s/5 min).
    nodeStatusUpdateFrequency: "5s",
    syncFrequency: "10s",
  });
}

export function kubeletArgs(layout: NodeLayout, s: NodeSettings): string[] {
  return [
    `--config=${layout.kubeletConfig}`,
    `--kubeconfig=${layout.kubeletKubeconfig}`,
    `--root-dir=${layout.kubeletRoot}`,
    `--cert-dir=${layout.kubeletRoot}/pki`,
    `--node-ip=${s.nodeAddress}`,
    `--hostname-override=${s.nodeName}`,
    "--v=1",
  ];
}

/**
 * kube-proxy in nftables mode (GA in 1.33), run in the node's network namespace, so its table
 * and the Service CIDR never meet another node's or the host's firewall.
 */
export function kubeProxyConfig(layout: NodeLayout, s: NodeSettings): string {
  return stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "nftables",
    clientConnection: { kubeconfig: layout.proxyKubeconfig },
    hostnameOverride: s.nodeName,
    clusterCIDR: s.podCidr,
    healthzBindAddress: `${s.nodeAddress}:${PROXY_HEALTHZ_PORT}`,
    metricsBindAddress: `${s.nodeAddress}:10249`,
    // NodePorts answer on the node's address only (the host reaches it over the node's link).
    nodePortAddresses: [`${s.nodeAddress}/32`],
    // 0 leaves the kernel's conntrack settings alone: the table size is machine-wide (only
    // writable from the host's namespace) and not kube-proxy's to change here.
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: "0s",
      tcpCloseWaitTimeout: "0s",
    },
    oomScoreAdj: 0,
  });
}

export function kubeProxyArgs(layout: NodeLayout): string[] {
  return [`--config=${layout.proxyConfig}`, "--v=1"];
}

export function schedulerArgs(layout: NodeLayout, s: NodeSettings): string[] {
  return [
    `--kubeconfig=${layout.schedulerKubeconfig}`,
    `--authentication-kubeconfig=${layout.schedulerKubeconfig}`,
    `--authorization-kubeconfig=${layout.schedulerKubeconfig}`,
    // Its health port is probed from the host over the node's link (self-signed serving cert).
    `--bind-address=${s.nodeAddress}`,
    `--secure-port=${SCHEDULER_PORT}`,
    `--cert-dir=${layout.pkiDir}/scheduler-serving`,
    "--authentication-skip-lookup",
    // One scheduler per cluster.
    "--leader-elect=false",
    "--profiling=false",
    "--v=1",
  ];
}
