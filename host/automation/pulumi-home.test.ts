import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { AUTOMATIC_LOG_NOTE, preparePulumiHome, pulumiEnv } from "./pulumi-runner";

// The real pulumi CLI of the toolchain, in a PULUMI_HOME of this test's own: what it writes to
// `logs` there, with and without the file that stands in the directory's place.
describe("preparePulumiHome: Pulumi's automatic log, off unless kept", function () {
  this.timeout(60_000);
  let home: string;
  const env = (extra: NodeJS.ProcessEnv = {}) =>
    pulumiEnv("home-test", {
      ...process.env,
      PULUMI_HOME: home,
      PULUMI_CONFIG_PASSPHRASE: "home-test",
      PULUMI_CONFIG_PASSPHRASE_FILE: undefined,
      KLUTCH_PULUMI_LOGS: undefined,
      ...extra,
    });
  const logs = () => path.join(home, "logs");
  /** `pulumi version`: every command starts the automatic log (pkg/cmd/pulumi/pulumi.go). */
  const pulumiVersion = (e: NodeJS.ProcessEnv) => {
    const r = spawnSync("pulumi", ["version"], { env: e, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };

  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-home-"));
  });
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it("the CLI left alone writes a log per command into PULUMI_HOME/logs", () => {
    pulumiVersion(env());
    const written = fs.readdirSync(logs()).filter((f) => f.endsWith(".log"));
    assert.equal(written.length, 1, `one log for one command: ${written.join(", ")}`);
  });

  it("a file in the directory's place: the CLI runs, prints its version and writes no log", () => {
    const e = env();
    preparePulumiHome(e);
    assert.match(pulumiVersion(e), /^v\d+\.\d+\.\d+/);
    assert.ok(fs.statSync(logs()).isFile());
    assert.equal(fs.readFileSync(logs(), "utf8"), AUTOMATIC_LOG_NOTE);
  });

  it("replaces a logs directory Pulumi already filled, and is idempotent", () => {
    pulumiVersion(env());
    assert.ok(fs.statSync(logs()).isDirectory());
    preparePulumiHome(env());
    preparePulumiHome(env());
    assert.equal(fs.readFileSync(logs(), "utf8"), AUTOMATIC_LOG_NOTE);
  });

  it("KLUTCH_PULUMI_LOGS=keep gives the log back: the file goes, the CLI writes its logs again", () => {
    preparePulumiHome(env());
    const kept = env({ KLUTCH_PULUMI_LOGS: "keep" });
    preparePulumiHome(kept);
    assert.equal(fs.existsSync(logs()), false);
    pulumiVersion(kept);
    assert.ok(fs.readdirSync(logs()).some((f) => f.endsWith(".log")));
  });

  it("refuses a KLUTCH_PULUMI_LOGS it does not know, naming the value and the two it takes, and writes nothing", () => {
    assert.throws(
      () => preparePulumiHome(env({ KLUTCH_PULUMI_LOGS: "yes" })),
      /KLUTCH_PULUMI_LOGS="yes" is not a setting: set it to "keep" .* or to "off"/,
    );
    assert.equal(fs.existsSync(logs()), false);
    preparePulumiHome(env({ KLUTCH_PULUMI_LOGS: "off" }));
    assert.ok(fs.statSync(logs()).isFile());
  });

  it("creates PULUMI_HOME when missing and does nothing without one", () => {
    const nested = path.join(home, "a", "b");
    preparePulumiHome({ PULUMI_HOME: nested });
    assert.ok(fs.statSync(path.join(nested, "logs")).isFile());
    preparePulumiHome({});
  });
});
