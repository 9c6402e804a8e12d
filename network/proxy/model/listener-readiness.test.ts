import { strict as assert } from "node:assert";
import { listenerReadiness, type SliceView } from "./listener-readiness";

const slice = (ports: number[], endpoints: [string, boolean | undefined][]): SliceView => ({
  ports: ports.map((port) => ({ port, protocol: "TCP" })),
  endpoints: endpoints.map(([name, ready]) => ({
    conditions: ready === undefined ? {} : { ready },
    targetRef: { kind: "Pod", name },
  })),
});
const pods = (entries: [string, string][]) => new Map<string, string | undefined>(entries);
/** A rollout from config c1 to c2 on one port: the new pod is a ready endpoint, the old one published with `oldReady`. */
const rollout = (oldReady: boolean) =>
  listenerReadiness(
    [
      slice(
        [30000],
        [
          ["p-old", oldReady],
          ["p-new", true],
        ],
      ),
    ],
    pods([
      ["p-old", "c1"],
      ["p-new", "c2"],
    ]),
    "c2",
    [30000],
  );

describe("proxy listeners in service (EndpointSlices and pod configs)", () => {
  it("is ready when every ready endpoint runs the current config and every port is published", () => {
    const judged = listenerReadiness(
      [
        slice(
          [30000, 30001],
          [
            ["p-new-1", true],
            ["p-new-2", undefined],
          ],
        ),
      ],
      pods([
        ["p-new-1", "c2"],
        ["p-new-2", "c2"],
      ]),
      "c2",
      [30000, 30001],
    );
    assert.deepEqual(judged, { ready: true, pods: ["p-new-1", "p-new-2"] });
  });

  it("waits while a pod of the old config is still a ready endpoint (mid-rollout)", () => {
    assert.deepEqual(rollout(true), {
      ready: false,
      waitingFor: "ready endpoints of the current config only; still published: p-old",
    });
  });

  it("ignores terminating pods (published ready=false)", () => {
    assert.equal(rollout(false).ready, true);
  });

  it("waits for a port the slices do not publish yet (the Service's new port)", () => {
    const judged = listenerReadiness(
      [slice([30000], [["p", true]])],
      pods([["p", "c"]]),
      "c",
      [30000, 30001],
    );
    assert.deepEqual(judged, { ready: false, waitingFor: "port(s) 30001 in the Service's EndpointSlices" });
  });

  it("waits while no endpoint is ready, and counts an endpoint that is not a known pod as stale", () => {
    assert.deepEqual(listenerReadiness([], pods([]), "c", []), {
      ready: false,
      waitingFor: "a ready endpoint in the Service's EndpointSlices",
    });
    assert.deepEqual(listenerReadiness([slice([30000], [["p", false]])], pods([["p", "c"]]), "c", [30000]), {
      ready: false,
      waitingFor: "a ready endpoint in the Service's EndpointSlices",
    });
    const gone = listenerReadiness([slice([30000], [["p-gone", true]])], pods([]), "c", [30000]);
    assert.equal(gone.ready, false);
  });

  it("takes ports only from slices with a ready endpoint", () => {
    const judged = listenerReadiness(
      [slice([30000, 30001], [["p-old", false]]), slice([30000], [["p-new", true]])],
      pods([
        ["p-old", "c1"],
        ["p-new", "c2"],
      ]),
      "c2",
      [30000, 30001],
    );
    assert.equal(judged.ready, false);
  });
});
