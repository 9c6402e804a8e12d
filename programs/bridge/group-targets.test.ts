import { strict as assert } from "node:assert";
import type { BridgeSettings } from "../../lib/bridge/settings";
import { GroupTargets } from "./group-targets";
import type { Target } from "./program";

const CLUSTER: Target = {
  kind: "kubernetes",
  kubeconfig: "apiVersion: v1\nkind: Config\n",
  namespace: "klutch-network",
  portRange: { from: 30000, to: 30099 },
  serviceType: "ClusterIP",
};
const proxy = (from: number, hop?: "kernel"): BridgeSettings => ({
  version: 1,
  consumers: {
    "team-a": {
      appCluster: "a",
      implementation: "proxy",
      proxy: { serviceType: "NodePort", portRange: { from, to: from + 99 }, ...(hop ? { hop } : {}) },
    },
    "team-b": {
      appCluster: "b",
      implementation: "proxy",
      proxy: { serviceType: "ClusterIP", portRange: { from: 40000, to: 40099 } },
    },
  },
});

describe("bridge: each group's settings, as run and as the environment has them now", () => {
  it("a group runs again only when its own settings changed since its last run", async () => {
    let current: BridgeSettings | undefined = proxy(30100);
    const targets = new GroupTargets({ target: CLUSTER, settings: () => Promise.resolve(current) });
    await targets.readSettings();
    assert.equal(
      targets.settingsMoved("team-a/proxy", proxy(30200)),
      false,
      "never run: the cache queues it",
    );
    const target = targets.realise("team-a/proxy");
    assert.deepEqual(target?.portRange, { from: 30100, to: 30199 });
    targets.realise("team-b/proxy");

    assert.equal(targets.settingsMoved("team-a/proxy", proxy(30100)), false);
    // Another namespace's change is not this group's.
    const otherChanged = proxy(30100);
    otherChanged.consumers["team-b"] = {
      appCluster: "b",
      implementation: "proxy",
      proxy: { serviceType: "NodePort", portRange: { from: 40000, to: 40099 } },
    };
    assert.equal(targets.settingsMoved("team-a/proxy", otherChanged), false);
    assert.equal(targets.settingsMoved("team-b/proxy", otherChanged), true);

    assert.equal(targets.settingsMoved("team-a/proxy", proxy(30200)), true, "a moved port range");
    assert.equal(targets.settingsMoved("team-a/proxy", proxy(30100, "kernel")), true, "the kernel hop");
    assert.equal(targets.settingsMoved("team-a/proxy", undefined), true, "its settings removed");

    current = proxy(30200);
    await targets.readSettings();
    targets.realise("team-a/proxy");
    assert.equal(targets.settingsMoved("team-a/proxy", proxy(30200)), false, "run with them now");
    targets.forget("team-a/proxy");
    assert.equal(targets.settingsMoved("team-a/proxy", undefined), false, "a forgotten group");
  });

  it("the local target has no settings and no kubernetes target", () => {
    const targets = new GroupTargets({
      target: {
        kind: "local",
        stateDir: "/nonexistent",
        bindAddress: "127.0.0.1",
        portRange: { from: 1, to: 2 },
      },
      settings: () => Promise.reject(new Error("never read")),
    });
    assert.equal(targets.realise("team-a/proxy"), undefined);
    assert.equal(targets.settingsMoved("team-a/proxy", proxy(30100)), false);
  });
});
