import { strict as assert } from "node:assert";
import { holdsSecret, ROOT_STACK_TYPE, RunFactsCollector } from "./run-facts";

const secret = {
  "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
  ciphertext: "[secret]",
};
const stackOutputs = (outputs: Record<string, unknown>) => ({
  resOutputsEvent: { metadata: { type: ROOT_STACK_TYPE, new: { outputs } } },
});

describe("run facts from engine events", () => {
  it("takes the root stack's outputs and the summary, as the CLI would report them", () => {
    const c = new RunFactsCollector();
    c.observe({
      resOutputsEvent: { metadata: { type: "pulumi-nodejs:dynamic:Resource", new: { outputs: { x: 1 } } } },
    });
    c.observe(stackOutputs({ endpoints: { a: { port: 22001 } }, problems: {} }));
    c.observe({
      summaryEvent: { resourceChanges: { same: 2, update: 1 }, result: "succeeded", durationSeconds: 1 },
    });
    assert.deepEqual(c.facts(), {
      outputs: {
        endpoints: { value: { a: { port: 22001 } }, secret: false },
        problems: { value: {}, secret: false },
      },
      resourceChanges: { same: 2, update: 1 },
      result: "succeeded",
      durationSeconds: 1,
    });
  });

  it("has no outputs when any output holds a secret (masked in events), so the CLI is asked", () => {
    const c = new RunFactsCollector();
    c.observe(stackOutputs({ endpoints: {}, nested: { list: [1, secret] } }));
    assert.equal(c.facts().outputs, undefined);
  });

  it("has no outputs when the root stack's outputs were never sent", () => {
    const c = new RunFactsCollector();
    c.observe({ summaryEvent: { resourceChanges: { same: 1 }, result: "succeeded" } });
    assert.equal(c.facts().outputs, undefined);
    assert.deepEqual(c.facts().resourceChanges, { same: 1 });
  });

  it("reads a stack without outputs as empty outputs", () => {
    const c = new RunFactsCollector();
    c.observe({ resOutputsEvent: { metadata: { type: ROOT_STACK_TYPE, new: {} } } });
    assert.deepEqual(c.facts().outputs, {});
  });

  it("finds secrets at any depth and nowhere else", () => {
    assert.equal(holdsSecret(secret), true);
    assert.equal(holdsSecret({ a: [{ b: secret }] }), true);
    assert.equal(holdsSecret({ a: [{ b: "1b47061264138c4ac30d75fd1eb44270" }] }), false);
    assert.equal(holdsSecret(null), false);
  });
});
