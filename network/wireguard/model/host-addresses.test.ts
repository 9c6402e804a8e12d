import { strict as assert } from "node:assert";
import { CLUSTER_SETTINGS, wireguardPath } from "../../../test/helpers/wireguard-fixtures";
import { planWireguardGroup } from "./group-plan";
import { hostNames, plannedAddress } from "./host-addresses";

describe("WireGuard instance hosts by name (host-addresses.ts, group-plan.ts)", () => {
  const NAME = "pg.team-a.svc.cluster.local";

  it("lists each name once, sorted, and never an address", () => {
    assert.deepEqual(hostNames([NAME, "10.96.0.9", "a.example.test", NAME]), ["a.example.test", NAME]);
  });

  it("an address plans as itself; a name by what it resolved to; a failed or non-IPv4 answer is the path's problem", () => {
    assert.deepEqual(plannedAddress("10.96.0.9", {}, []), { address: "10.96.0.9" });
    assert.deepEqual(plannedAddress(NAME, { [NAME]: { address: "10.96.40.2" } }, [NAME]), {
      address: "10.96.40.2",
    });
    const failed = plannedAddress(NAME, { [NAME]: { problem: "ENOTFOUND" } }, [NAME]);
    assert.ok("problem" in failed);
    assert.match(
      failed.problem,
      /instanceHost "pg\.team-a\.svc\.cluster\.local" does not resolve .*\(ENOTFOUND\)/,
    );
    assert.match(failed.problem, /a Service's DNS name does/);
    const v6 = plannedAddress(NAME, { [NAME]: { address: "fd00::1" } }, [NAME]);
    assert.ok("problem" in v6 && /gave "fd00::1", not an IPv4 address/.test(v6.problem));
    const missing = plannedAddress(NAME, {}, [NAME]);
    assert.ok("problem" in missing && /not looked up/.test(missing.problem));
  });

  it("a prediction (nothing resolved) plans names with distinct stand-ins from TEST-NET-1", () => {
    const names = ["a.example.test", NAME];
    assert.deepEqual(plannedAddress("a.example.test", undefined, names), { address: "192.0.2.1" });
    assert.deepEqual(plannedAddress(NAME, undefined, names), { address: "192.0.2.2" });
  });

  it("the bridge's plan routes and filters the resolved address; the preview predicts the same endpoints without resolving", () => {
    const paths = [
      wireguardPath("bound", NAME, "team-a"),
      wireguardPath("orders", "10.96.12.7", "team-a"),
      wireguardPath("gone", "old.team-a.svc.cluster.local", "team-a"),
    ];
    const hosts = {
      [NAME]: { address: "10.96.40.2" },
      "old.team-a.svc.cluster.local": { problem: "ENOTFOUND" },
    };
    const bridge = planWireguardGroup("team-a/wireguard", paths, {
      kind: "kubernetes",
      settings: CLUSTER_SETTINGS,
      hosts,
    });
    assert.deepEqual(bridge.unresolved, ["gone"]);
    assert.deepEqual(Object.keys(bridge.rejected), ["gone"]);
    assert.ok(bridge.plan!.allowedIps.includes("10.96.40.2/32"));
    assert.ok(!bridge.plan!.allowedIps.some((a) => a.startsWith("192.0.2.")));
    assert.deepEqual(
      bridge.plan!.forwarders.map((f) => [f.name, f.host]),
      [
        ["bound", "10.96.40.2"],
        ["orders", "10.96.12.7"],
      ],
    );
    // The preview resolves nothing and predicts, for names that resolve, the bridge's endpoints.
    const resolving = paths.filter((p) => p.metadata.name !== "gone");
    const preview = planWireguardGroup("team-a/wireguard", resolving, {
      kind: "kubernetes",
      settings: CLUSTER_SETTINGS,
    });
    assert.deepEqual(preview.unresolved, []);
    assert.deepEqual(preview.endpoints, bridge.endpoints);
  });
});
