import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { type ResourceServing, setResourceServing } from "../../providers/dynamic/klutch-resource";
import { RandomKey } from "../../providers/dynamic/random-key";
import { toolchainPulumiCommand } from "../helpers/toolchain-cli";

/**
 * A stack whose components' resources were dynamic resources (what the klutch plugin made before
 * it served them itself) moves over to `klutch:internal:*` with the real engine and the real
 * plugin (programs/klutch-provider/plugin): the alias keeps the resource, so its key survives, and the plugin then
 * serves its diff and delete. The program is inline, in this process; which form its RandomKey
 * takes is set as the plugin's entry point sets it.
 */
describe("the klutch plugin takes over its components' dynamic resources (e2e)", function () {
  this.timeout(5 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-plugin-resources-"));
  const env = toolchainEnv();
  let serving: ResourceServing = "dynamic";
  let length = 32;
  let stack: Stack;

  before(async () => {
    fs.mkdirSync(path.join(work, "state"));
    fs.writeFileSync(
      path.join(work, "Pulumi.yaml"),
      stringify({
        name: "plugin-resources",
        runtime: "nodejs",
        plugins: {
          providers: [{ name: "klutch", path: path.join(repoRoot, "programs", "klutch-provider", "plugin") }],
        },
      }),
    );
    stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: "plugin-resources",
        projectName: "",
        program: () => {
          setResourceServing(serving);
          try {
            const key = new RandomKey("cookie-key", { length, encoding: "hex" });
            return Promise.resolve({ key: key.value });
          } finally {
            setResourceServing("dynamic");
          }
        },
      },
      {
        workDir: work,
        pulumiCommand: await toolchainPulumiCommand(env),
        envVars: {
          PATH: env.PATH ?? "",
          PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
          PULUMI_CONFIG_PASSPHRASE: "plugin-resources-e2e",
          PULUMI_SKIP_UPDATE_CHECK: "true",
          PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
          // The dynamic resource of the first `up` runs in the engine's dynamic-provider host,
          // which needs @pulumi/pulumi and the provider's modules from here; the plugin does not.
          NODE_PATH: path.join(repoRoot, "node_modules"),
        },
      },
    );
  });

  after(async () => {
    await stack?.destroy().catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** The state's resources of the program, as type → inputs. */
  const resources = async () =>
    (
      ((await stack.exportStack()).deployment.resources ?? []) as {
        type: string;
        inputs?: Record<string, unknown>;
      }[]
    )
      .filter((r) => !r.type.startsWith("pulumi:"))
      .map((r) => ({ type: r.type, inputs: r.inputs ?? {} }));

  let key = "";

  it("a dynamic resource first, as before", async () => {
    const up = await stack.up({ color: "never" });
    assert.deepEqual(up.summary.resourceChanges, { create: 2 });
    key = up.outputs.key!.value as string;
    assert.equal(up.outputs.key!.secret, true);
    assert.match(key, /^[0-9a-f]{64}$/);
    const [r] = await resources();
    assert.equal(r?.type, "pulumi-nodejs:dynamic/klutch:RandomKey");
    assert.ok(r && "__provider" in r.inputs);
  });

  it("made by the plugin: the same resource through its alias, the key kept, no code left in the inputs", async () => {
    serving = "plugin";
    stack.workspace.envVars.NODE_PATH = "";
    const up = await stack.up({ color: "never" });
    const changes: Record<string, number | undefined> = up.summary.resourceChanges ?? {};
    for (const kind of ["create", "delete", "replace", "create-replacement", "delete-replaced"])
      assert.equal(changes[kind], undefined, `${kind} in ${JSON.stringify(changes)}`);
    assert.equal(up.outputs.key!.value, key);
    const [r] = await resources();
    assert.equal(r?.type, "klutch:internal:RandomKey");
    assert.equal(r && "__provider" in r.inputs, false);

    const again = await stack.up({ color: "never" });
    assert.deepEqual(again.summary.resourceChanges, { same: 2 });
  });

  it("the plugin serves its diff: a new length replaces the key", async () => {
    length = 48;
    const up = await stack.up({ color: "never" });
    assert.equal(up.summary.resourceChanges?.replace, 1, JSON.stringify(up.summary.resourceChanges));
    assert.match(up.outputs.key!.value as string, /^[0-9a-f]{96}$/);
  });

  it("and its delete: destroy leaves nothing", async () => {
    const res = await stack.destroy({ color: "never" });
    assert.equal(res.summary.result, "succeeded");
    assert.deepEqual(await resources(), []);
  });
});
