import { strict as assert } from "node:assert";
import { parse } from "yaml";
import { chooseSlot, nodeLink, NODE_LINK_SLOTS, slotOf } from "./addresses";
import {
  cniConfig,
  containerdConfig,
  kubeletArgs,
  kubeletConfig,
  kubeProxyConfig,
  schedulerArgs,
  type NodeSettings,
} from "./config";
import { nodeId, nodeLayout, nodeNames } from "./layout";

const layout = nodeLayout("/state/control-plane");
const names = nodeNames(nodeId("/state/control-plane"));
const settings: NodeSettings = {
  nodeName: "control-plane-node",
  nodeAddress: "172.30.1.2",
  hostAddress: "172.30.1.1",
  apiServerPort: 40123,
  podCidr: "10.244.0.0/24",
  sandboxImage: "klutch.local/pause:3.10.1-abc",
  caCert: "/state/control-plane/pki/ca.crt",
  clusterDns: "10.96.0.10",
  clusterDomain: "cluster.local",
};

describe("local node (pure parts)", () => {
  it("gives each cluster dir its own machine-wide names, short enough for interfaces", () => {
    const a = nodeId("/state/control-plane");
    const b = nodeId("/tmp/other/control-plane");
    assert.notEqual(a, b);
    assert.match(a, /^[0-9a-f]{8}$/);
    assert.ok(names.hostInterface.length <= 15, names.hostInterface);
    assert.equal(names.cgroupRoot, `/klutch-${a}`);
    assert.equal(layout.dir, "/state/control-plane/node");
    assert.equal(layout.pidFile("kubelet"), "/state/control-plane/pids/kubelet.pid");
  });

  it("plans a /30 per node in 172.30.0.0/16 and skips used slots", () => {
    assert.deepEqual(nodeLink(0), {
      slot: 0,
      hostAddress: "172.30.0.1",
      nodeAddress: "172.30.0.2",
      prefixLength: 30,
    });
    assert.deepEqual(nodeLink(NODE_LINK_SLOTS - 1).nodeAddress, "172.30.255.254");
    assert.throws(() => nodeLink(NODE_LINK_SLOTS));
    assert.equal(slotOf("172.30.1.2"), 64);
    assert.equal(slotOf("172.30.1.1"), 64);
    assert.equal(slotOf("10.0.0.1"), undefined);
    const first = chooseSlot("0000000a", new Set());
    assert.equal(first, 10);
    assert.equal(chooseSlot("0000000a", new Set([10, 11])), 12);
    assert.equal(chooseSlot("00003fff", new Set([NODE_LINK_SLOTS - 1])), 0, "wraps around");
  });

  it("keeps containerd's state under the node's dir, with the settings this machine needs", () => {
    const toml = containerdConfig(layout, settings);
    for (const line of [
      'root = "/state/control-plane/node/containerd/root"',
      'state = "/state/control-plane/node/containerd/state"',
      'address = "/state/control-plane/node/containerd/containerd.sock"',
      "restrict_oom_score_adj = true",
      "netns_mounts_under_state_dir = true",
      'sandbox_image = "klutch.local/pause:3.10.1-abc"',
      'BinaryName = "runc"',
      "SystemdCgroup = false",
      'bin_dir = "/usr/lib/cni"',
      'conf_dir = "/state/control-plane/node/cni/net.d"',
    ]) {
      assert.ok(toml.includes(line), `containerd config lacks ${line}`);
    }
  });

  it("puts pods on a bridge with host-local addresses from the pod CIDR and port mappings", () => {
    const cni = JSON.parse(cniConfig(layout, settings));
    assert.deepEqual(
      cni.plugins.map((p: { type: string }) => p.type),
      ["bridge", "portmap"],
    );
    assert.deepEqual(cni.plugins[0].ipam.ranges, [[{ subnet: "10.244.0.0/24" }]]);
    assert.equal(cni.plugins[0].ipam.dataDir, layout.cniIpamDir);
    assert.equal(cni.plugins[0].hairpinMode, true);
  });

  it("configures the kubelet for cgroup v1 with cgroupfs, its own cgroup root and the node address", () => {
    const k = parse(kubeletConfig(layout, names, settings));
    assert.equal(k.kind, "KubeletConfiguration");
    assert.equal(k.failCgroupV1, false);
    assert.equal(k.cgroupDriver, "cgroupfs");
    assert.equal(k.cgroupRoot, names.cgroupRoot);
    assert.equal(k.containerRuntimeEndpoint, `unix://${layout.containerdSocket}`);
    assert.equal(k.address, "172.30.1.2");
    assert.equal(k.healthzBindAddress, "172.30.1.2");
    assert.equal(k.readOnlyPort, 0);
    assert.equal(k.authentication.anonymous.enabled, false);
    assert.equal(k.authorization.mode, "Webhook");
    assert.equal(k.staticPodPath, "");
    assert.equal(k.imageGCHighThresholdPercent, 100, "images cannot be pulled again: never collect them");
    assert.deepEqual(k.clusterDNS, ["10.96.0.10"]);
    assert.equal(k.clusterDomain, "cluster.local");
    assert.equal(k.resolvConf, "", "pods never get the host's resolver");
    const args = kubeletArgs(layout, settings);
    assert.ok(args.includes("--node-ip=172.30.1.2"));
    assert.ok(args.includes(`--root-dir=${layout.kubeletRoot}`));
    assert.ok(args.includes("--hostname-override=control-plane-node"));
  });

  it("runs kube-proxy in nftables mode with NodePorts on the node address only", () => {
    const p = parse(kubeProxyConfig(layout, settings));
    assert.equal(p.mode, "nftables");
    assert.deepEqual(p.nodePortAddresses, ["172.30.1.2/32"]);
    assert.equal(p.clusterCIDR, "10.244.0.0/24");
    assert.equal(p.conntrack.maxPerCore, 0, "leaves the machine-wide conntrack table alone");
    assert.equal(p.clientConnection.kubeconfig, layout.proxyKubeconfig);
    const s = schedulerArgs(layout, settings);
    assert.ok(s.includes("--leader-elect=false"));
    assert.ok(s.includes("--bind-address=172.30.1.2"));
  });
});
