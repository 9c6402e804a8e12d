import { strict as assert } from "node:assert";
import type { AppClusterConfig } from "../config/schema";
import { instanceNames } from "../config/schema";
import { planInstanceNames } from "./plan";

const BRIDGE = "klutch.local/bridge:0.1.0-node24-0123456789ab";
const COREDNS = "klutch.local/coredns:1.15.0-0123456789ab";
const nodeJson = (images: Record<string, string>) => JSON.stringify({ slot: 1, nodeName: "n", images });

const app = (name: string, extra: Partial<AppClusterConfig> = {}) =>
  ({
    value: {
      name,
      infrastructure: "local",
      nodes: 1,
      networkConnector: { implementation: "proxy" },
      ...extra,
    },
    at: ["appClusters", 0],
  }) as { value: AppClusterConfig; at: (string | number)[] };

function plan(zones: unknown[], apps = [app("app-1")], files: Record<string, string> = {}, extra = {}) {
  const issues: string[] = [];
  const servers = planInstanceNames(
    {
      appClusters: apps,
      names: instanceNames.parse({ zones, ...extra }),
      localStateDir: "/state",
      readFile: (f) => {
        const text = files[f];
        if (text === undefined) throw new Error(`ENOENT ${f}`);
        return text;
      },
    },
    (at, message) => issues.push(`${at.join(".")}: ${message}`),
  );
  return { servers, issues };
}

describe("instance names: where each app cluster's names server runs", () => {
  const held = { "/state/app-1/node/node.json": nodeJson({ bridge: BRIDGE, coredns: COREDNS }) };

  it("no zones: no names server anywhere, nothing read", () => {
    assert.deepEqual(plan([]), { servers: [], issues: [] });
  });

  it("a local app cluster runs it from its node's own bridge and CoreDNS images, zones normalised", () => {
    const { servers, issues } = plan(["Service.DC1.Consul."], [app("app-1")], held);
    assert.deepEqual(issues, []);
    assert.deepEqual(servers, [
      {
        cluster: "app-1",
        zones: ["service.dc1.consul"],
        image: BRIDGE,
        corednsImage: COREDNS,
        imagePullPolicy: "Never",
      },
    ]);
  });

  it("another cluster pulls the published bridge image and kubeadm's CoreDNS, or the ones named", () => {
    const existing = app("eks", { infrastructure: "existing", nodes: undefined });
    assert.deepEqual(plan(["a9s.internal"], [existing]).servers[0], {
      cluster: "eks",
      zones: ["a9s.internal"],
      image: "ghcr.io/klutch-pulumi/bridge:0.1.0",
      corednsImage: "registry.k8s.io/coredns/coredns:v1.14.6",
      imagePullPolicy: "IfNotPresent",
    });
    const named = plan(
      ["a9s.internal"],
      [existing],
      {},
      { image: "r.example/b:1", corednsImage: "r.example/c:1" },
    );
    assert.deepEqual(
      [named.servers[0]!.image, named.servers[0]!.corednsImage],
      ["r.example/b:1", "r.example/c:1"],
    );
  });

  it("refuses zones that take over the cluster's own names, and duplicates, naming index and fix", () => {
    const { servers, issues } = plan(
      ["cluster.local", "svc.cluster.local", "local", "a.b", "a.b"],
      [app("app-1")],
      held,
    );
    assert.deepEqual(servers, []);
    assert.equal(issues.length, 4);
    assert.match(
      issues[0]!,
      /^instanceNames\.zones\.0: "cluster\.local" would take over the app clusters' own names/,
    );
    assert.match(issues[3]!, /^instanceNames\.zones\.4: "a\.b" is listed twice \(also at index 3\)/);
    assert.deepEqual(plan(["ds.svc.cluster.local"], [app("app-1")], held).issues, []);
  });

  it("refuses a local app cluster that cannot run the pod, or whose node lacks the image named", () => {
    assert.match(
      plan(["a.b"], [app("app-2", { nodes: 0 })]).issues[0]!,
      /^appClusters\.0\.nodes: is 0, but instanceNames\.zones needs a names server in every app cluster/,
    );
    assert.match(
      plan(["a.b"], [app("app-1")], {}).issues[0]!,
      /the node of "app-1" has no image list .* start it with `npm run clusters -- up`/,
    );
    assert.match(
      plan(["a.b"], [app("app-1")], held, { corednsImage: "other/coredns:1" }).issues[0]!,
      /^instanceNames\.corednsImage: "other\/coredns:1" is not an image the node of "app-1" holds/,
    );
  });
});
