import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, PulumiCommand, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import { upFromEvents } from "../../programs/bridge/engine-run";
import { objectDeletedByStep } from "../../lib/bridge/drift";
import { toolchainEnv } from "../../host/automation/toolchain";
import { toolchainPulumi } from "../helpers/toolchain-cli";

/** One dynamic resource whose input decides whether an update changes it. */
const provider: pulumi.dynamic.ResourceProvider = {
  create: (inputs: { v: number }) => Promise.resolve({ id: "r", outs: inputs }),
  diff: (_id: string, olds: { v: number }, news: { v: number }) =>
    Promise.resolve({ changes: olds.v !== news.v }),
  update: (_id: string, _olds: unknown, news: { v: number }) => Promise.resolve({ outs: news }),
};

/** The same provider, refusing every update (Pulumi caches a provider's serialised text per object). */
const refusing: pulumi.dynamic.ResourceProvider = {
  ...provider,
  update: () => Promise.reject(new Error("the provider refused the update")),
};

/** A resource whose outputs name an object as a Kubernetes one's do (`metadata.name`). */
class Named extends pulumi.dynamic.Resource {
  constructor(name: string) {
    super(provider, name, { v: 0, metadata: { name: "np-team-a-proxy" } }, {});
  }
}

class Counter extends pulumi.dynamic.Resource {
  constructor(name: string, v: number, refuse: boolean) {
    super(refuse ? refusing : provider, name, { v }, {});
  }
}

/**
 * programs/bridge/engine-run.ts against the real engine: `upFromEvents` returns what `stack.up` returns,
 * and runs the CLI once where `stack.up` runs it four times (up, `stack output` twice,
 * `stack history`), except when a secret output makes it ask the CLI for the outputs.
 */
describe("engine runs read their result from engine events (e2e)", function () {
  this.timeout(5 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-engine-run-"));
  const env = toolchainEnv();
  const callLog = path.join(work, "calls.log");
  let stack: Stack;
  let value = 1;
  let withSecret = false;
  let refuse = false;
  let withNamed = false;

  before(async () => {
    fs.mkdirSync(path.join(work, "state"));
    // The CLI behind a wrapper that records each command line, then runs the real one.
    const bin = path.join(work, "cli", "bin");
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(
      path.join(bin, "pulumi"),
      `#!/bin/sh\necho "$1 $2" >> ${callLog}\nexec ${toolchainPulumi(env)} "$@"\n`,
      { mode: 0o755 },
    );
    const command = await PulumiCommand.get({ root: path.dirname(bin) });
    stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: "engine-run",
        projectName: "engine-run",
        program: () => {
          new Counter("counter", value, refuse);
          if (withNamed) new Named("named");
          return Promise.resolve({
            endpoints: { "team-a/pg": { hostForConsumer: "127.0.0.1", port: 22000 + value } },
            ...(withSecret ? { token: pulumi.secret("s3cr3t") } : {}),
          });
        },
      },
      {
        workDir: work,
        pulumiCommand: command,
        envVars: {
          PATH: env.PATH ?? "",
          PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
          PULUMI_CONFIG_PASSPHRASE: "engine-run-test",
          PULUMI_SKIP_UPDATE_CHECK: "true",
        },
      },
    );
    fs.writeFileSync(callLog, "");
  });

  after(() => fs.rmSync(work, { recursive: true, force: true }));

  /** The commands run since the last call. */
  const commands = () => {
    const lines = fs.readFileSync(callLog, "utf8").split("\n").filter(Boolean);
    fs.writeFileSync(callLog, "");
    return lines;
  };

  it("gives the same outputs and changes as stack.up, with one CLI run instead of four", async () => {
    const plain = await stack.up({ color: "never" });
    assert.deepEqual(commands(), ["up --yes", "stack output", "stack output", "stack history"]);
    value = 2;
    const plainChange = await stack.up({ color: "never" });
    commands();

    const fromEvents = await upFromEvents(stack, { color: "never" });
    assert.deepEqual(commands(), ["up --yes"]);
    assert.deepEqual(fromEvents.outputs, plainChange.outputs);
    assert.notDeepEqual(plainChange.outputs, plain.outputs);
    assert.deepEqual(fromEvents.resourceChanges, { same: 2 });
    assert.deepEqual(plainChange.summary.resourceChanges, { same: 1, update: 1 });

    value = 3;
    const changed = await upFromEvents(stack, { color: "never" });
    assert.deepEqual(commands(), ["up --yes"]);
    assert.deepEqual(changed.resourceChanges, plainChange.summary.resourceChanges);
    assert.deepEqual(changed.outputs.endpoints?.value, {
      "team-a/pg": { hostForConsumer: "127.0.0.1", port: 22003 },
    });
    assert.deepEqual(changed.outputs, await stack.outputs());
  });

  it("asks the CLI for outputs when one is a secret, and keeps it secret", async () => {
    commands();
    withSecret = true;
    const result = await upFromEvents(stack, { color: "never" });
    assert.deepEqual(commands(), ["up --yes", "stack output", "stack output"]);
    assert.deepEqual(result.outputs.token, { value: "s3cr3t", secret: true });
  });

  it("leaves the stack's own methods in place afterwards", async () => {
    assert.equal(Object.prototype.hasOwnProperty.call(stack, "outputs"), false);
    assert.equal(Object.prototype.hasOwnProperty.call(stack, "info"), false);
    commands();
    await stack.outputs();
    assert.deepEqual(commands(), ["stack output", "stack output"]);
  });

  it("reports a failed update as stack.up does, and removes its overrides", async () => {
    value = 4;
    refuse = true;
    try {
      await assert.rejects(upFromEvents(stack, { color: "never" }), /the provider refused the update/);
    } finally {
      refuse = false;
    }
    assert.equal(Object.prototype.hasOwnProperty.call(stack, "outputs"), false);
  });

  it("a step that deletes a resource names its object in the event's old outputs (what drift healing reads)", async () => {
    withNamed = true;
    await upFromEvents(stack, { color: "never" });
    withNamed = false;
    const events: EngineEvent[] = [];
    await upFromEvents(stack, { color: "never", onEvent: (e) => events.push(e) });
    const deletes = events.filter((e) => e.resourcePreEvent?.metadata.op === "delete");
    assert.equal(deletes.length, 1, "one delete step");
    const metadata = deletes[0]!.resourcePreEvent!.metadata;
    assert.equal(metadata.old?.outputs?.metadata?.name, "np-team-a-proxy");
    // lib/bridge/drift.ts reads exactly that, for the types pulumi-kubernetes makes.
    const asKubernetes = {
      resourcePreEvent: { metadata: { ...metadata, type: "kubernetes:apps/v1:Deployment" } },
    };
    assert.equal(objectDeletedByStep(asKubernetes), "Deployment/np-team-a-proxy");
  });
});
