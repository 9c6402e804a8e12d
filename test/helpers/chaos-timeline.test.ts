import { strict as assert } from "node:assert";
import {
  falseReadyStretches,
  longestOutages,
  recoveredAt,
  type ProbeSample,
  type StatusSample,
} from "./chaos-timeline";

/** Seconds, in the timelines' milliseconds. */
const s = (n: number) => n * 1000;

/** Probes of path `a` once a second from t=0, by a pattern: `.` reached the instance, `x` did not. */
const probes = (pattern: string, path = "a"): ProbeSample[] =>
  [...pattern].map((c, i) => ({ at: i * 1000, path, ok: c === "." }));

describe("chaos timeline: what the probes saw against what the status said", () => {
  it("a failure while the status said Ready lasts until the status said otherwise or a probe succeeded", () => {
    const status: StatusSample[] = [
      { at: 0, path: "a", ready: true },
      { at: 3500, path: "a", ready: false },
      { at: 7500, path: "a", ready: true },
    ];
    // Failures from 2 s; Ready=False is read at 3.5 s; the path works from 6 s; Ready again at 7.5 s.
    assert.deepEqual(falseReadyStretches(probes("..xxxx....", "a"), status, 1000), [
      { path: "a", from: s(2), to: s(4) },
    ]);
    // Honest status throughout: nothing.
    assert.deepEqual(
      falseReadyStretches(probes("..xxxx....", "a"), [{ at: 1500, path: "a", ready: false }], 1000),
      [],
    );
  });

  it("a stretch still open at the end of the run ends one interval after its last probe; paths are apart", () => {
    const status: StatusSample[] = [
      { at: 0, path: "a", ready: true },
      { at: 0, path: "b", ready: true },
    ];
    assert.deepEqual(falseReadyStretches([...probes("..xx", "a"), ...probes("....", "b")], status, 1000), [
      { path: "a", from: s(2), to: s(4) },
    ]);
    // No status read before the probe: not counted either way.
    assert.deepEqual(falseReadyStretches(probes("x..."), [{ at: 500, path: "a", ready: true }], 1000), []);
  });

  it("outages: each path's longest run of failures; recovery once every path has steady successes", () => {
    const all = [...probes(".xx...xxx....", "a"), ...probes("....x........", "b")];
    assert.deepEqual(
      longestOutages(all, 1000),
      new Map([
        ["a", 3000],
        ["b", 1000],
      ]),
    );
    assert.equal(recoveredAt(all, ["a", "b"], 3), 9000);
    assert.equal(recoveredAt(all, ["a", "b"], 5), undefined, "a has four successes after its last failure");
    assert.equal(recoveredAt(all, ["a", "c"], 1), undefined, "c was never probed");
    assert.deepEqual(longestOutages(probes("..xx"), 1000), new Map([["a", 2000]]), "still down at the end");
  });
});
