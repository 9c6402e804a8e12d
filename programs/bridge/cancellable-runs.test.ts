import { strict as assert } from "node:assert";
import { CancellableRuns } from "./cancellable-runs";

describe("CancellableRuns: the engine runs a stopping bridge cancels", () => {
  it("aborts the signal of each run in flight, and starts none afterwards", async () => {
    const runs = new CancellableRuns();
    let signal: AbortSignal | undefined;
    let release!: () => void;
    const inFlight = runs.run(async (s) => {
      signal = s;
      await new Promise<void>((r) => (release = r));
      return "ended";
    });
    await Promise.resolve();
    assert.equal(signal?.aborted, false);
    runs.cancel();
    assert.equal(signal?.aborted, true);
    release();
    assert.equal(await inFlight, "ended", "a cancelled run ends as its engine does");
    let started = false;
    await assert.rejects(
      runs.run(() => Promise.resolve((started = true))),
      /the bridge is stopping/,
    );
    assert.equal(started, false);
    assert.throws(() => runs.throwIfCancelled(), /the bridge is stopping/);
  });

  it("gives each run its own signal, so one run's end leaves no listener on another's", async () => {
    const runs = new CancellableRuns();
    const signals: AbortSignal[] = [];
    await runs.run((s) => Promise.resolve(void signals.push(s)));
    await runs.run((s) => Promise.resolve(void signals.push(s)));
    assert.notEqual(signals[0], signals[1]);
    runs.throwIfCancelled();
  });
});
