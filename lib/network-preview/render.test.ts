import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { buildReport, type ConnectionInput } from "./model";
import { addedScenario, awsWidenedScenario, rangeMovedScenario, removedScenario } from "./fixtures";
import { REDACTED, redact, renderJson, renderMarkdown, renderMermaid } from "./render";
import { renderSvg } from "./svg";

const GOLDEN = path.join(__dirname, "golden");
const UPDATE = process.env.UPDATE_GOLDEN === "1";

function golden(file: string, actual: string): void {
  const target = path.join(GOLDEN, file);
  if (UPDATE || !fs.existsSync(target)) {
    fs.mkdirSync(GOLDEN, { recursive: true });
    fs.writeFileSync(target, actual);
    if (!UPDATE) assert.fail(`wrote missing golden file ${file}; check it and run again`);
  }
  assert.equal(
    actual,
    fs.readFileSync(target, "utf8"),
    `differs from ${file} (UPDATE_GOLDEN=1 rewrites goldens)`,
  );
}

const scenarios = {
  added: addedScenario,
  "range-moved": rangeMovedScenario,
  "aws-widened": awsWidenedScenario,
  "app-cluster-removed": removedScenario,
};

describe("network preview renderers", () => {
  for (const [name, input] of Object.entries(scenarios)) {
    it(`${name}: JSON and Markdown match their golden files`, () => {
      const report = buildReport(input);
      golden(`${name}.json`, renderJson(report));
      golden(`${name}.md`, renderMarkdown(report));
      golden(`${name}.svg`, renderSvg(report));
    });
  }

  it("the SVG is well-formed XML with each connection's box coloured by its risk, and escapes text", () => {
    const report = buildReport(rangeMovedScenario);
    const svg = renderSvg(report);
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.equal((svg.match(/<rect /g) ?? []).length, 1 + report.connections.length * 3 + 1);
    assert.equal((svg.match(/fill="#ffe0b2" stroke="#e65100"/g) ?? []).length, 1 + report.connections.length);
    const odd = buildReport({
      ...addedScenario,
      connections: addedScenario.connections.map((c) => ({ ...c, id: 'a<b>&"c' })),
    });
    assert.match(renderSvg(odd), /a&lt;b&gt;&amp;&quot;c/);
    assert.doesNotMatch(renderSvg(odd), /a<b>/);
  });

  it("the Markdown starts with the summary line and folds the details", () => {
    const md = renderMarkdown(buildReport(rangeMovedScenario));
    assert.match(
      md.split("\n")[0] ?? "",
      /^\*\*Network preview: exit 4 — .*2 endpoint changed of 2 connections/,
    );
    assert.ok(md.includes("<details><summary>Hops</summary>"));
    assert.ok(md.includes("```mermaid\nflowchart LR"));
  });

  it("the Mermaid diagram colours each connection by its risk and the widened rule red", () => {
    const m = renderMermaid(buildReport(awsWidenedScenario));
    assert.match(m, /:::r_interruption/);
    assert.match(m, /classDef r_interruption fill:#ffe0b2/);
    assert.match(m, /-->\|widened\|/);
    assert.match(m, /linkStyle 2 stroke:#b71c1c/);
  });

  it("a huge report stays under the limit, keeps the summary whole and says what it trimmed", () => {
    const many: ConnectionInput[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `conn-${String(i).padStart(5, "0")}-with-a-rather-long-generated-name`,
      change: "keep",
      implementation: "proxy",
      consumer: { namespace: `team-${i % 40}` },
      instance: { host: `10.0.${Math.floor(i / 250)}.${i % 250}`, port: 5432 },
      before: { host: "127.0.0.1", port: 40000 + i },
      after: { host: "127.0.0.1", port: 50000 + i },
      hops: [],
    }));
    const report = buildReport({ sources: [{ kind: "connections", ref: "big.yaml" }], connections: many });
    const md = renderMarkdown(report);
    assert.ok(md.length <= 65536, `${md.length} characters`);
    assert.ok(md.startsWith(`**Network preview: ${report.summary.line}**`));
    assert.match(md, /more rows trimmed/);
    assert.match(md, /_Trimmed to fit a GitHub comment: \d+ detail rows and \d+ sections left out/);
    // A small limit: the summary survives even when no detail fits.
    const tiny = renderMarkdown(report, 600);
    assert.ok(tiny.length <= 600, `${tiny.length}`);
    assert.ok(tiny.startsWith(`**Network preview: ${report.summary.line}**`));
  });

  it("the JSON redacts secrets: secret keys, Pulumi secret values and private keys", () => {
    const value = redact({
      kubeconfig: "apiVersion: v1",
      nested: { privateKey: "abc", wireguardPrivateKey: "k", port: 5432 },
      outputs: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "s3cret" },
      pem: "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
      host: "db.internal",
    });
    assert.deepEqual(value, {
      kubeconfig: REDACTED,
      nested: { privateKey: REDACTED, wireguardPrivateKey: REDACTED, port: 5432 },
      outputs: REDACTED,
      pem: REDACTED,
      host: "db.internal",
    });
    const json = renderJson(
      buildReport({ ...addedScenario, notes: ["-----BEGIN OPENSSH PRIVATE KEY----- leaked in a note"] }),
    );
    assert.ok(!json.includes("BEGIN OPENSSH"));
  });
});
