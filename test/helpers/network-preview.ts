import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { reportSchema, type NetworkPreviewReport } from "../../lib/network-preview/schema";
import { NODE_TYPESCRIPT_ARGS, repoRoot } from "../../host/automation/toolchain";

export interface PreviewRun {
  code: number;
  report: NetworkPreviewReport;
  markdown: string;
  stderr: string;
}

/**
 * `npm run preview:network` as an ops engineer runs it (its script, in the project), once per
 * format in `formats`; the report is read back through its schema. Every run must agree on the
 * exit code. With only "json", the Markdown is left empty.
 */
export function runPreview(opts: {
  work: string;
  name: string;
  args: string[];
  PATH: string;
  formats?: ("json" | "markdown")[];
  timeoutMs?: number;
}): PreviewRun {
  const run = (format: "json" | "markdown") => {
    const out = path.join(opts.work, `${opts.name}.${format === "json" ? "json" : "md"}`);
    const r = spawnSync(
      process.execPath,
      [
        ...NODE_TYPESCRIPT_ARGS,
        "programs/commands/preview-network.ts",
        "--format",
        format,
        "--out",
        out,
        ...opts.args,
      ],
      {
        cwd: repoRoot,
        env: { ...process.env, PATH: opts.PATH },
        encoding: "utf8",
        timeout: opts.timeoutMs ?? 300_000,
      },
    );
    return {
      code: r.status ?? -1,
      text: fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "",
      stderr: r.stderr,
    };
  };
  const json = run("json");
  assert.ok(json.text, `no report written (exit ${json.code}):\n${json.stderr}`);
  const report = reportSchema.parse(JSON.parse(json.text));
  let markdown = "";
  if ((opts.formats ?? ["json", "markdown"]).includes("markdown")) {
    // The Markdown of the same change: a second real preview, which must agree on the grade.
    const md = run("markdown");
    assert.equal(md.code, json.code, md.stderr);
    markdown = md.text;
  }
  return { code: json.code, report, markdown, stderr: json.stderr };
}
