import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { normalizeEntries } from "./oci-layout";
import {
  ALERTMANAGER_COMMAND,
  ALERTMANAGER_CONFIG,
  PROMETHEUS_CONFIG,
  PROMETHEUS_UID,
  prometheusSpec,
} from "./prometheus-image";

/** The flags a program's --help lists (`--name=` or `--name `), by name. */
function flagsOf(program: string): Set<string> {
  const help = spawnSync(program, ["--help"], { encoding: "utf8" });
  return new Set([...`${help.stdout}${help.stderr}`.matchAll(/--([a-z][\w.-]*)/g)].map((m) => m[1]!));
}
const flagName = (arg: string) => /^--([^=]+)/.exec(arg)?.[1] ?? arg;

describe("klutch.local/prometheus: Debian's Prometheus and Alertmanager with promtool and amtool, one image", () => {
  const spec = prometheusSpec("klutch.local/prometheus");

  it("holds both servers and both clients at upstream's paths, their configs and Debian's templates, runs as nobody", () => {
    const entries = normalizeEntries(spec.entries);
    const paths = new Set(entries.map((e) => e.path));
    for (const p of [
      "/bin/prometheus",
      "/bin/promtool",
      "/bin/alertmanager",
      "/bin/amtool",
      "/etc/prometheus/prometheus.yml",
      "/etc/alertmanager/alertmanager.yml",
      "/usr/share/prometheus/alertmanager/default.tmpl",
      "/usr/share/prometheus/alertmanager/email.tmpl",
    ])
      assert.ok(paths.has(p), p);
    assert.ok(!paths.has("/usr/share/prometheus/alertmanager/generate-ui.sh"));
    const alertmanager = entries.find((e) => e.path === "/bin/alertmanager");
    assert.ok(alertmanager?.type === "file" && alertmanager.source === "/usr/bin/prometheus-alertmanager");
    assert.ok(
      [...paths].some((p) => /\/libc\.so\.6$/.test(p)),
      "Debian's cgo builds load libc",
    );
    assert.equal(spec.config.User, `${PROMETHEUS_UID}:${PROMETHEUS_UID}`);
    assert.deepEqual(spec.config.Entrypoint, ["/bin/prometheus"]);
    assert.match(spec.version, /^2\.\d+\.\d+.*-alertmanager0\.\d+/);
  });

  it("starts each server with flags its build has, on configs its own checker accepts", () => {
    const prometheus = flagsOf("/usr/bin/prometheus");
    for (const arg of spec.config.Cmd ?? []) assert.ok(prometheus.has(flagName(arg)), arg);
    const alertmanager = flagsOf("/usr/bin/prometheus-alertmanager");
    for (const arg of ALERTMANAGER_COMMAND.slice(1)) assert.ok(alertmanager.has(flagName(arg)), arg);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-prometheus-config-"));
    try {
      fs.writeFileSync(path.join(dir, "prometheus.yml"), PROMETHEUS_CONFIG);
      fs.writeFileSync(path.join(dir, "alertmanager.yml"), ALERTMANAGER_CONFIG);
      assert.match(
        execFileSync("promtool", ["check", "config", path.join(dir, "prometheus.yml")], { encoding: "utf8" }),
        /SUCCESS/,
      );
      assert.match(
        execFileSync("amtool", ["check-config", path.join(dir, "alertmanager.yml")], { encoding: "utf8" }),
        /SUCCESS/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
