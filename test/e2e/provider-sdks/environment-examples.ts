import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { kubectl, kubectlApply } from "../../helpers/kubectl";
import { repoRoot } from "../../../host/automation/toolchain";
import { bindCrds } from "../../../lib/bind/crds";
import { DEFAULT_BIND_RELEASE } from "../../../lib/bind/upstream/release";
import { ENVIRONMENT_LABEL } from "../../../lib/environment-plan";
import { crossplaneDeployment, installCrossplaneCrds } from "../../helpers/foreign-crossplane";
import { type ExamplesContext, TSC_FLAGS } from "./examples";

/** The environment example of each language (examples/environment/<language>). */
const EXAMPLES = path.join(repoRoot, "examples", "environment");
const PROJECT = "klutch-environment";

/** What every language's example is refused with on the operator's 2.3 core: its version, and the fix. */
const REFUSAL =
  /Environment klutch: invalid arguments:\s+- crossplane\.version: is 2\.4\.0 \(the default\), but the control plane ops-cp runs Crossplane 2\.3\.0 \(Deployment crossplane-system\/crossplane\), and the version decides the API shapes Klutch writes: set crossplane\.version to 2\.3\.0/;

/** What a preview onto the operator's 2.4 core plans: the whole environment, Klutch's packages on that core. */
const PLANNED = [
  /klutch:crossplane:Crossplane klutch-crossplane create/,
  /kubernetes:pkg\.crossplane\.io\/v1:Provider klutch-crossplane-provider-provider-kubernetes create/,
  /klutch:bind:AppClusterBinding klutch-shop-binding create/,
];

/**
 * The environment example of each language, as a user copies it out of examples/, handed the
 * local cluster as both of its existing clusters, on which the operator installed Crossplane
 * (its CRDs and its core's Deployment; the example uses it, `crossplane.useInstalled`): the
 * TypeScript and Python ones `preview` through their Automation API with the released SDK and
 * plugin. The Environment asks the control plane's API server before it registers anything: on a
 * core of another minor each preview is refused naming it and the fix; on a 2.4 core it plans
 * the whole environment, and nothing is made. The cluster runs no kubelet, so no `up`; the YAML
 * example's `preview` and `up` are run by test/e2e/existing-control-plane.test.ts. The Go one is
 * built and vetted on the released module (no pulumi-language-go here), the C# one checked
 * against the generated SDK (programs/klutch-provider/csharp-example.test.ts).
 */
export function environmentExampleCases(ctx: ExamplesContext): void {
  describe("the environment example of each language (examples/environment)", () => {
    const config = () => ({
      controlPlaneKubeconfig: ctx.kubeconfigPath(),
      appClusterKubeconfig: ctx.kubeconfigPath(),
    });
    const copyOut = (language: string): string => {
      const dir = path.join(ctx.work(), `environment-${language}`);
      fs.cpSync(path.join(EXAMPLES, language), dir, { recursive: true });
      return dir;
    };
    const core = (tag: string) => {
      const r = kubectlApply(
        ctx.kubeconfigPath(),
        crossplaneDeployment("crossplane-system", tag, {}, ["core", "start"]),
      );
      assert.equal(r.status, 0, r.stderr);
    };

    /** klutch-bind's CRDs, which the SDK cases installed unlabelled: the example's environment's own here. */
    const bindCrdsOwnedBy = (owner: string | undefined) =>
      kubectl(ctx.kubeconfigPath(), [
        "label",
        "crd",
        ...bindCrds(DEFAULT_BIND_RELEASE).map((c) => c.metadata.name),
        `${ENVIRONMENT_LABEL}${owner === undefined ? "-" : `=${owner}`}`,
        ...(owner === undefined ? [] : ["--overwrite"]),
      ]);

    before(async () => {
      await installCrossplaneCrds(ctx.kubeconfigPath());
      kubectl(ctx.kubeconfigPath(), ["create", "namespace", "crossplane-system"]);
      core("v2.3.0");
      bindCrdsOwnedBy("ops");
    });
    after(() => {
      kubectl(ctx.kubeconfigPath(), ["delete", "namespace", "crossplane-system", "--wait=true"]);
      bindCrdsOwnedBy(undefined);
    });

    let typescriptStack: Awaited<ReturnType<typeof LocalWorkspace.createOrSelectStack>> | undefined;
    it("typescript: `preview` onto a core of another minor is refused before anything is registered, naming it", async () => {
      const project = ctx.nodeProject();
      fs.copyFileSync(path.join(EXAMPLES, "typescript", "index.ts"), path.join(project, "environment.ts"));
      const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
      ctx.exec(
        process.execPath,
        [tsc, ...TSC_FLAGS, "--outDir", "out-environment", "environment.ts"],
        project,
      );
      const stack = await LocalWorkspace.createOrSelectStack(
        {
          stackName: "environment-typescript",
          projectName: PROJECT,
          // The compiled module run afresh on each run, as the language host runs a program: its
          // exports are the stack's outputs (a cached module would register nothing the second time).
          program: () => {
            const program = path.join(project, "out-environment", "environment.js");
            delete require.cache[program];
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            return Promise.resolve(require(program) as object);
          },
        },
        await ctx.workspaceOptions(copyOut("typescript")),
      );
      await stack.setAllConfig(
        Object.fromEntries(Object.entries(config()).map(([k, v]) => [k, { value: v }])),
      );
      typescriptStack = stack;
      const preview = await stack.preview().then(
        (r) => ({ refused: false, out: r.stdout }),
        (e: unknown) => ({
          refused: true,
          out:
            String((e as { stderr?: string }).stderr ?? e) + String((e as { stdout?: string }).stdout ?? ""),
        }),
      );
      assert.ok(preview.refused, `the preview was not refused:\n${preview.out}`);
      assert.match(preview.out, REFUSAL);
    });

    const pythonPreview = () => {
      const source = copyOut("python");
      const workDir = path.join(ctx.work(), "environment-python-project");
      fs.mkdirSync(workDir, { recursive: true });
      fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), stringify({ name: PROJECT, runtime: "python" }));
      const params = path.join(ctx.work(), "environment-python.json");
      fs.writeFileSync(
        params,
        JSON.stringify({ stackName: "environment-python", workDir, config: config() }),
      );
      const consumer = path.join(ctx.work(), "consumer.py");
      return ctx.spawn(ctx.venvPython(), [consumer, "preview", params, source], ctx.work());
    };

    it("python: `preview` is refused the same", () => {
      const r = pythonPreview();
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(`${r.stdout}\n${r.stderr}`, REFUSAL);
    });

    it("typescript and python: `preview` onto the operator's 2.4 core plans the whole environment and no Crossplane of its own; nothing is made", async () => {
      core("v2.4.0");
      const ts = await typescriptStack!.preview();
      for (const planned of PLANNED) assert.match(ts.stdout, planned);
      assert.doesNotMatch(ts.stdout, /helm\.sh/, "no Crossplane chart");
      const py = pythonPreview();
      assert.equal(py.status, 0, py.stderr);
      for (const planned of PLANNED) assert.match(py.stderr, planned);
      const { changes } = JSON.parse(py.stdout.trim().split("\n").pop()!) as { changes: { create: number } };
      assert.equal(changes.create, ts.changeSummary.create, "the same plan from both languages");
      assert.ok(changes.create > 50, JSON.stringify(changes));
    });

    it("go: builds and vets on the released module", () => {
      const dir = copyOut("go");
      ctx.exec("go", ["vet", "."], dir, ctx.goFromRelease());
      ctx.exec("go", ["build", "-trimpath", "-o", "environment", "."], dir, ctx.goFromRelease());
      assert.ok(fs.statSync(path.join(dir, "environment")).size > 0);
    });
  });
}
