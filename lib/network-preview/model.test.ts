import { strict as assert } from "node:assert";
import {
  buildReport,
  classify,
  exitCode,
  exposureDelta,
  portsReport,
  ruleCovers,
  type ConnectionInput,
} from "./model";
import {
  addedScenario,
  awsWidenedScenario,
  haproxyHop,
  rangeMovedScenario,
  removedScenario,
} from "./fixtures";
import { reportJsonSchema, reportSchema, type ExposureRule } from "./schema";

const rule = (source: string, from = 5432, to = from, destination = "sg-data"): ExposureRule => ({
  source,
  destination,
  protocol: "tcp",
  ports: { from, to },
});

const kept = (over: Partial<ConnectionInput> = {}): ConnectionInput => ({
  id: "c",
  change: "keep",
  implementation: "proxy",
  consumer: { namespace: "ns" },
  instance: { host: "10.0.0.1", port: 5432 },
  before: { host: "h", port: 1 },
  after: { host: "h", port: 1 },
  hops: [],
  ...over,
});

describe("network preview model", () => {
  describe("risk per connection", () => {
    it("unchanged endpoint and no replacement: none", () => {
      assert.equal(classify(kept()).risk, "none");
    });
    it("a port that moves: endpoint changed, naming both", () => {
      const r = classify(kept({ after: { host: "h", port: 2 } }));
      assert.equal(r.risk, "endpoint-changed");
      assert.match(r.reasons[0] ?? "", /h:1 → h:2/);
    });
    it("a host that moves is an endpoint change too", () => {
      assert.equal(classify(kept({ after: { host: "g", port: 1 } })).risk, "endpoint-changed");
    });
    it("an endpoint the engine cannot know yet: unknown, not none", () => {
      assert.equal(classify(kept({ after: { host: "h", port: "unknown" } })).risk, "unknown");
    });
    it("a replacement that deletes first: interruption; one that creates first is not", () => {
      const dbr = haproxyHop("s", "replace", { deleteBeforeReplace: true, replaceReasons: ["dir"] });
      const r = classify(kept({ hops: [dbr] }));
      assert.equal(r.risk, "interruption");
      assert.match(r.reasons[0] ?? "", /dir changed/);
      assert.equal(
        classify(kept({ hops: [haproxyHop("s", "replace", { deleteBeforeReplace: false })] })).risk,
        "none",
      );
    });
    it("broken outranks everything; deleted is removed; new is added", () => {
      assert.equal(
        classify(kept({ broken: ["no port left"], after: { host: "h", port: 9 } })).risk,
        "broken",
      );
      assert.equal(classify(kept({ change: "delete" })).risk, "removed");
      assert.equal(classify(kept({ change: "add", before: undefined })).risk, "added");
    });
  });

  describe("exposure", () => {
    it("a CIDR inside the old one does not widen; a wider one does, and 0.0.0.0/0 does", () => {
      assert.equal(ruleCovers(rule("10.0.0.0/16"), rule("10.0.1.0/24")), true);
      assert.equal(ruleCovers(rule("10.0.1.0/24"), rule("10.0.0.0/16")), false);
      assert.equal(exposureDelta([rule("10.0.0.0/16")], [rule("10.0.1.0/24")]).widened.length, 0);
      const wider = exposureDelta([rule("10.0.1.0/24")], [rule("10.0.0.0/16")]);
      assert.equal(wider.widened.length, 1);
      assert.match(wider.widened[0]?.why ?? "", /not inside/);
      assert.equal(exposureDelta([rule("10.0.1.0/24")], [rule("0.0.0.0/0")]).widened.length, 1);
    });
    it("more ports on the same source widen; a narrower port range does not", () => {
      assert.equal(
        exposureDelta([rule("10.0.0.0/16", 5432)], [rule("10.0.0.0/16", 5000, 6000)]).widened.length,
        1,
      );
      assert.equal(
        exposureDelta([rule("10.0.0.0/16", 5000, 6000)], [rule("10.0.0.0/16", 5432)]).widened.length,
        0,
      );
    });
    it("a new destination opened to a private range is added, not widened; to the internet it is widened", () => {
      const priv = exposureDelta([], [rule("10.1.0.0/16", 5432, 5432, "sg-new")]);
      assert.equal(priv.added.length, 1);
      assert.equal(priv.widened.length, 0);
      assert.equal(exposureDelta([], [rule("8.8.0.0/16", 5432, 5432, "sg-new")]).widened.length, 1);
    });
    it("a removed rule is listed as removed and never widens", () => {
      const d = exposureDelta([rule("10.0.0.0/16")], []);
      assert.deepEqual([d.removed.length, d.widened.length], [1, 0]);
    });
  });

  describe("ports", () => {
    it("reassigned, allocated, freed and headroom per group", () => {
      const p = portsReport([
        {
          group: "g",
          rangeAfter: { from: 100, to: 109 },
          before: { a: 100, b: 101, gone: 102 },
          after: { a: 100, b: 105, c: 103 },
          ownPorts: 0,
        },
      ]);
      assert.deepEqual(p.reassigned, [{ group: "g", id: "b", from: 101, to: 105 }]);
      assert.deepEqual(p.allocated, [{ group: "g", id: "c", port: 103 }]);
      assert.deepEqual(p.freed, [{ group: "g", id: "gone", port: 102 }]);
      assert.equal(p.groups[0]?.headroom, 7);
    });
    it("an unknown plan gives unknown headroom, not a made-up number", () => {
      const p = portsReport([
        { group: "g", rangeAfter: { from: 1, to: 2 }, before: {}, after: "unknown", ownPorts: 0 },
      ]);
      assert.equal(p.groups[0]?.headroom, "unknown");
    });
  });

  describe("report, grade and exit code", () => {
    it("added connection: grade 3", () => {
      const r = buildReport(addedScenario);
      assert.equal(r.summary.grade, 3);
      assert.deepEqual(r.ports.allocated, [
        { group: "team-a/proxy", id: "pending:team-a/billing", port: 42003 },
      ]);
    });
    it("range moved: endpoint changed, grade 4, two ports reassigned", () => {
      const r = buildReport(rangeMovedScenario);
      assert.equal(r.summary.grade, 4);
      assert.equal(r.summary.risks["endpoint-changed"], 2);
      assert.equal(r.ports.reassigned.length, 4);
    });
    it("AWS widened security group: grade 5 even though the connection is only interrupted", () => {
      const r = buildReport(awsWidenedScenario);
      assert.equal(r.connections[0]?.risk, "interruption");
      assert.equal(r.summary.widened, 1);
      assert.equal(r.summary.grade, 5);
    });
    it("app cluster removed: removed, blast radius counts connections, namespaces and clusters", () => {
      const r = buildReport(removedScenario);
      assert.equal(r.summary.risks.removed, 3);
      assert.deepEqual(
        r.blastRadius.map((b) => [b.connections, b.namespaces, b.clusters]),
        [[3, 2, 1]],
      );
    });
    it("nothing changed: grade 0; a changed hop alone: grade 3", () => {
      assert.equal(buildReport({ sources: [], connections: [kept()] }).summary.grade, 0);
      const hop = haproxyHop("s", "update");
      assert.equal(buildReport({ sources: [], connections: [], otherChanges: [hop] }).summary.grade, 3);
    });
    it("--fail-on decides which grades exit non-zero", () => {
      const r = buildReport(rangeMovedScenario);
      assert.equal(exitCode(r), 4);
      assert.equal(exitCode(r, "endpoint"), 4);
      assert.equal(exitCode(r, "broken"), 0);
      assert.equal(exitCode(r, "never"), 0);
      assert.equal(exitCode(buildReport(addedScenario), "endpoint"), 0);
    });
    it("every scenario's report satisfies the versioned schema, and the JSON Schema names its version", () => {
      for (const s of [addedScenario, rangeMovedScenario, awsWidenedScenario, removedScenario]) {
        reportSchema.parse(buildReport(s));
      }
      const js = reportJsonSchema();
      assert.equal(js.$id, "https://klutch.anynines.com/network-preview/v1");
      assert.ok(JSON.stringify(js).includes('"endpoint-changed"'));
    });
  });
});
