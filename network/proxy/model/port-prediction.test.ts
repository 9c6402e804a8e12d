import { strict as assert } from "node:assert";
import type { PreviewStep as ResourceStep } from "../../contract/preview";
import { UNKNOWN } from "../port-allocation";
import { ENGINE_UNKNOWN, portsDetail, predictPorts } from "./port-prediction";

const range = { from: 20000, to: 20009 };
function portsStep(
  op: ResourceStep["op"],
  newInputs?: Record<string, unknown>,
  oldOutputs?: Record<string, unknown>,
): ResourceStep {
  return {
    urn: "urn:pulumi:np-team-a-proxy::klutch-network-paths::pulumi-nodejs:dynamic:Resource::ports",
    type: "pulumi-nodejs:dynamic:Resource",
    op,
    name: "ports",
    ...(newInputs ? { newInputs } : {}),
    ...(oldOutputs ? { oldOutputs } : {}),
    diffPaths: [],
    replaceReasons: [],
    deleteBeforeReplace: false,
  };
}

describe("network preview plan: the ports the PortAllocation will hold after up", () => {
  it("reads unknown values as the provider's own sentinel does", () => {
    assert.equal(ENGINE_UNKNOWN, UNKNOWN);
  });

  it("no PortAllocation step, or inputs the engine does not know yet: unknown", () => {
    assert.equal(predictPorts(undefined), "unknown");
    assert.equal(predictPorts(portsStep("create")), "unknown");
    assert.equal(predictPorts(portsStep("create", { range, ids: ["a", ENGINE_UNKNOWN] })), "unknown");
    assert.equal(predictPorts(portsStep("update", { range: ENGINE_UNKNOWN, ids: ["a"] })), "unknown");
  });

  it("an unchanged allocation keeps the assignments and unplaced ids its state holds", () => {
    const old = { assignments: { a: 20003 }, unplaced: ["b"] };
    assert.deepEqual(predictPorts(portsStep("same", { range, ids: ["a", "b"] }, old)), {
      assignments: { a: 20003 },
      unplaced: ["b"],
    });
  });

  it("a created allocation starts from its seed (ports the paths report now)", () => {
    const plan = predictPorts(portsStep("create", { range, ids: ["a", "b"], seed: { b: 20007 } }));
    assert.notEqual(plan, "unknown");
    if (plan !== "unknown") {
      assert.equal(plan.assignments.b, 20007);
      assert.equal(typeof plan.assignments.a, "number");
      assert.notEqual(plan.assignments.a, 20007);
    }
  });

  it("an updated allocation keeps every old port and hands a released one out only after never-used ones", () => {
    const old = {
      assignments: { a: 20000, b: 20001 },
      released: [{ port: 20002, id: "gone" }],
    };
    const plan = predictPorts(portsStep("update", { range, ids: ["a", "b", "c"] }, old));
    assert.notEqual(plan, "unknown");
    if (plan !== "unknown") {
      assert.equal(plan.assignments.a, 20000);
      assert.equal(plan.assignments.b, 20001);
      assert.notEqual(plan.assignments.c, 20002);
      assert.deepEqual(plan.unplaced, []);
    }
  });

  it("a range too small leaves the ids that do not fit unplaced, with overflow leave-out", () => {
    const plan = predictPorts(
      portsStep("create", { range: { from: 20000, to: 20001 }, ids: ["a", "b", "c"], overflow: "leave-out" }),
    );
    assert.notEqual(plan, "unknown");
    if (plan !== "unknown") {
      assert.equal(Object.keys(plan.assignments).length, 2);
      assert.deepEqual(plan.unplaced, ["c"]);
    }
  });

  it("the ports hop's detail names a moved range, and nothing otherwise", () => {
    const moved = portsStep("update", { range: { from: 21000, to: 21009 } }, { range });
    assert.equal(portsDetail(moved), "range 20000-20009 → 21000-21009");
    assert.equal(portsDetail(portsStep("update", { range }, { range })), undefined);
    assert.equal(portsDetail(portsStep("create", { range })), undefined);
  });
});
