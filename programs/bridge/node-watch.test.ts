import { strict as assert } from "node:assert";
import type { NodeLike, NodePortHosts } from "../../lib/bridge/node-host";
import { NodeHostWatch } from "./node-watch";
import { FakeClock } from "../../test/helpers/fake-clock";

const node = (name: string, ip: string): NodeLike => ({
  metadata: { name },
  status: {
    addresses: [{ type: "InternalIP", address: ip }],
    conditions: [{ type: "Ready", status: "True" }],
  },
});

describe("NodeHostWatch: lists the nodes while a NodePort group reports one", () => {
  function setup(initial: NodeLike[]) {
    const clock = new FakeClock();
    const state = { nodes: initial, wanted: true, fail: false, lists: 0, seen: [] as NodePortHosts[] };
    const logs: string[] = [];
    const watch = new NodeHostWatch({
      list: () => {
        state.lists++;
        return state.fail ? Promise.reject(new Error("nodes is forbidden")) : Promise.resolve(state.nodes);
      },
      wanted: () => state.wanted,
      onHosts: (hosts) => state.seen.push(hosts),
      intervalMs: 30_000,
      log: (level, msg) => logs.push(`${level} ${msg}`),
      clock,
    });
    return { clock, state, logs, watch };
  }

  it("hands over the hosts of every round, the first one included (compared with what each group ran with)", async () => {
    const { clock, state, watch } = setup([node("a", "10.0.0.1"), node("b", "10.0.0.2")]);
    watch.start();
    await clock.advance(0);
    state.nodes = [node("b", "10.0.0.2")]; // a drained and deleted
    await clock.advance(30_000);
    // Without an ExternalIP, external consumers get the InternalIP too.
    assert.deepEqual(state.seen, [
      { internal: "10.0.0.1", external: "10.0.0.1" },
      { internal: "10.0.0.2", external: "10.0.0.2" },
    ]);
    watch.stop();
    assert.deepEqual(clock.pending(), [], "stop clears the next round");
    await clock.advance(30_000);
    assert.equal(state.lists, 2);
  });

  it("lists nothing while no group's proxy reports a node", async () => {
    const { clock, state, watch } = setup([node("a", "10.0.0.1")]);
    state.wanted = false;
    watch.start();
    await clock.advance(0);
    await clock.advance(30_000);
    assert.equal(state.lists, 0);
    assert.deepEqual(clock.pending(), [30_000], "still polling for when one does");
    watch.stop();
  });

  it("a failing list is logged once per streak and never stops the polling", async () => {
    const { clock, state, logs, watch } = setup([node("a", "10.0.0.1")]);
    state.fail = true;
    watch.start();
    await clock.advance(0);
    await clock.advance(30_000);
    await clock.advance(30_000);
    assert.equal(state.lists, 3);
    assert.deepEqual(logs, ["warn cannot list the data plane's nodes; NodePort hosts stay as they are"]);
    state.fail = false;
    await clock.advance(30_000);
    assert.equal(logs.at(-1), "info listing the data plane's nodes works again");
    assert.deepEqual(state.seen, [{ internal: "10.0.0.1", external: "10.0.0.1" }]);
    watch.stop();
  });
});
