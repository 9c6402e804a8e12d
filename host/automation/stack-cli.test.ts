import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pulumiEnv } from "./pulumi-runner";
import { StackCli } from "./stack-cli";

// The real pulumi CLI of the toolchain, on a project and a file backend of this test's own.
describe("StackCli: config and outputs through the real pulumi CLI", function () {
  this.timeout(60_000);
  let dir: string;
  let base: NodeJS.ProcessEnv;
  const stackFile = () => fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8");

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "stack-cli-"));
    fs.writeFileSync(
      path.join(dir, "Pulumi.yaml"),
      [
        "name: stackcli",
        "runtime: yaml",
        "config:",
        "  stackcli:declared:",
        "    type: string",
        "    default: set-in-pulumi-yaml",
        "outputs:",
        "  plain: hello",
        "  hidden:",
        "    fn::secret: not-for-eyes",
        "",
      ].join("\n"),
    );
    base = {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
      PULUMI_HOME: path.join(dir, "home"),
      PULUMI_CONFIG_PASSPHRASE: "stack-cli-test",
      PULUMI_CONFIG_PASSPHRASE_FILE: undefined,
    };
    fs.mkdirSync(path.join(dir, "state"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("creates the stack on first use and keeps a secret set from stdin encrypted in its file", () => {
    const cli = new StackCli("dev", { base, workDir: dir });
    cli.setConfig("stackcli:token", "s3cr3t-value", { secret: true });
    assert.match(stackFile(), /stackcli:token:\n\s+secure: v1:/);
    assert.doesNotMatch(stackFile(), /s3cr3t-value/);
    assert.equal(cli.getConfig("stackcli:token"), "s3cr3t-value");
  });

  it("lists settings with secrets masked unless asked, and a declared one with its Pulumi.yaml default", () => {
    const cli = new StackCli("dev", { base, workDir: dir });
    cli.setConfig("stackcli:name", "orders", {});
    const masked = cli.allConfig(false);
    assert.deepEqual(masked["stackcli:name"], { value: "orders", secret: false });
    assert.equal(masked["stackcli:token"]?.secret, true);
    assert.equal(masked["stackcli:token"]?.value, undefined);
    assert.equal(masked["stackcli:declared"]?.value, "set-in-pulumi-yaml");
    assert.equal(cli.allConfig(true)["stackcli:token"]?.value, "s3cr3t-value");
  });

  it("sets and reads a path into a structured value, and removes a setting", () => {
    const cli = new StackCli("dev", { base, workDir: dir });
    cli.setConfig("stackcli:bind.replicas", "2", { path: true });
    assert.equal(cli.getConfig("stackcli:bind.replicas", true), "2");
    assert.deepEqual(JSON.parse(cli.getConfig("stackcli:bind")), { replicas: 2 });
    cli.removeConfig("stackcli:name");
    assert.throws(
      () => cli.getConfig("stackcli:name"),
      /pulumi config get: configuration key 'name' not found for stack 'dev'/,
    );
  });

  it("prints the outputs with a secret one masked unless asked", () => {
    const env = pulumiEnv("dev", base);
    const up = spawnSync("pulumi", ["up", "--yes", "--stack", "dev", "--cwd", dir, "--non-interactive"], {
      env,
      encoding: "utf8",
    });
    assert.equal(up.status, 0, up.stderr || up.stdout);
    const cli = new StackCli("dev", { base, workDir: dir });
    assert.deepEqual(cli.outputs(false), { plain: "hello", hidden: "[secret]" });
    assert.deepEqual(cli.outputs(true), { plain: "hello", hidden: "not-for-eyes" });
  });

  it("reports a stack that needs a passphrase before running anything", () => {
    assert.throws(
      () =>
        new StackCli("other", {
          base: { ...base, PULUMI_CONFIG_PASSPHRASE: undefined },
          workDir: dir,
        }),
      /stack "other" needs PULUMI_CONFIG_PASSPHRASE/,
    );
  });
});
