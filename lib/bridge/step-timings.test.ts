import { strict as assert } from "node:assert";
import { StepTimings } from "./step-timings";

const URN = (type: string, name: string) =>
  `urn:pulumi:g::klutch-np::klutch:network:TcpProxy$${type}::${name}`;
const meta = (op: string, type: string, name: string) => ({ op, type, urn: URN(type, name) });

describe("bridge: where an engine run spends its time", () => {
  it("times each changing step from its pre event to its outputs, slowest first; same and read are left out", () => {
    let t = 0;
    const timings = new StepTimings(() => t);
    const dep = meta("update", "kubernetes:apps/v1:Deployment", "np-proxy");
    const cm = meta("create-replacement", "kubernetes:core/v1:ConfigMap", "np-config");
    const svc = meta("same", "kubernetes:core/v1:Service", "np-svc");
    timings.onEvent({ resourcePreEvent: { metadata: cm } });
    timings.onEvent({ resourcePreEvent: { metadata: svc } });
    t = 120;
    timings.onEvent({ resOutputsEvent: { metadata: cm } });
    timings.onEvent({ resOutputsEvent: { metadata: svc } });
    timings.onEvent({ resourcePreEvent: { metadata: dep } });
    t = 9_920;
    timings.onEvent({ resOutputsEvent: { metadata: dep } });
    assert.deepEqual(timings.slowest(5), [
      "update kubernetes:apps/v1:Deployment np-proxy: 9800 ms",
      "create-replacement kubernetes:core/v1:ConfigMap np-config: 120 ms",
    ]);
    assert.deepEqual(timings.slowest(1), ["update kubernetes:apps/v1:Deployment np-proxy: 9800 ms"]);
  });

  it("ignores outputs without a pre event and events of other kinds", () => {
    const timings = new StepTimings(() => 0);
    timings.onEvent({ resOutputsEvent: { metadata: meta("update", "t", "n") } });
    timings.onEvent({});
    assert.deepEqual(timings.slowest(3), []);
  });
});
