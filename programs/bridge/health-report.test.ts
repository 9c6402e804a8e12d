import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../lib/bridge/api";
import { readyStatus } from "../../lib/bridge/status";
import { networkPath } from "../../test/helpers/network-path";
import type { PathHealth } from "../../network/contract/implementation";
import { reportUnusable } from "./health-report";
import { FakeWriter } from "./test-helpers";

const NOW = Date.parse("2026-12-03T18:00:00Z");
const readyAt = (name: string, port: number): NetworkPathObject => {
  const p = networkPath(name);
  return { ...p, status: readyStatus(p, { hostForConsumer: "10.0.0.9", port }, "2026-12-03T17:00:00Z") };
};
const unreachable: PathHealth = {
  ready: false,
  reason: "InstanceUnreachable",
  message: "10.0.0.1:5432 does not answer the proxy's checks",
};

function report(paths: NetworkPathObject[], health: Record<string, PathHealth>) {
  const writer = new FakeWriter();
  const events: string[] = [];
  const asked: string[][] = [];
  const done = reportUnusable("team-a/proxy", {
    paths: () => paths,
    health: (_key, live) => {
      asked.push(live.map((p) => p.metadata.name));
      return Promise.resolve(health);
    },
    writer,
    events: { record: (p, type, reason) => events.push(`${p.metadata.name} ${type} ${reason}`) },
    now: () => NOW,
  });
  return { done, writer, events, asked };
}

describe("bridge: a path its data path says cannot be used is Ready=False at once", () => {
  it("writes Ready=False at the endpoint the status names, says why, and nudges the composite; the usable path is left alone", async () => {
    const { done, writer, events } = report([readyAt("a", 30000), readyAt("b", 30001)], {
      a: unreachable,
      b: { ready: true, reason: "BackendUp", message: "" },
    });
    assert.deepEqual(await done, ["a"]);
    assert.deepEqual(writer.calls, ["status a", "nudge a"]);
    // The nudge carries the unusable path on to the binding that waits for it (readiness-relay.ts).
    assert.equal(writer.relayed.get("a"), false);
    const status = writer.statuses.get("a")!;
    assert.equal(status.hostForConsumer, "10.0.0.9");
    assert.equal(status.port, 30000);
    const ready = status.conditions!.find((c) => c.type === "Ready")!;
    assert.deepEqual(
      [ready.status, ready.reason, ready.message],
      ["False", "InstanceUnreachable", unreachable.message],
    );
    assert.equal(ready.lastTransitionTime, new Date(NOW).toISOString());
    assert.deepEqual(events, ["a Warning ProbeFailed"]);
  });

  it("one way only: a path already Ready=False, one with no endpoint yet and one being deleted are not read or written", async () => {
    const notReady = {
      ...networkPath("c"),
      status: {
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "InstanceUnreachable",
            message: "",
            lastTransitionTime: "",
          },
        ],
      },
    } as NetworkPathObject;
    const deleting = {
      ...readyAt("d", 30003),
      metadata: { name: "d", generation: 1, deletionTimestamp: "2026-12-03T17:59:00Z" },
    };
    const { done, writer, asked } = report([notReady, networkPath("e"), deleting], {
      c: unreachable,
      d: unreachable,
      e: unreachable,
    });
    assert.deepEqual(await done, []);
    assert.deepEqual(writer.calls, []);
    assert.deepEqual(asked, [], "no health read when no path is Ready");
  });
});
