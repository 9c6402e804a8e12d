import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, type LocalWorkspaceOptions } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { repoRoot } from "../../../host/automation/toolchain";
import { kubectl, kubectlJson, kubectlTry } from "../../helpers/kubectl";

/** The examples every language's users read (examples/network-path/<language>). */
const EXAMPLES = path.join(repoRoot, "examples", "network-path");
const PROJECT = "klutch-network-path";
const NAMESPACE = "sdk-examples";

/** What the cases take from provider-sdks.test.ts's stack: its cluster, release and built consumers. */
export interface ExamplesContext {
  work(): string;
  /** A command's stdout, asserting it exits 0 (the file's environment and `extra`). */
  exec: (file: string, args: string[], cwd: string, extra?: NodeJS.ProcessEnv) => string;
  /** A command run as `exec` runs it, however it exits. */
  spawn: (
    file: string,
    args: string[],
    cwd: string,
  ) => { status: number | null; stdout: string; stderr: string };
  /** An inline program's workspace in `workDir` (the toolchain's CLI, the file's environment). */
  workspaceOptions: (workDir: string) => Promise<LocalWorkspaceOptions>;
  kubeconfigPath(): string;
  postgresPort(): number;
  venvPython(): string;
  /** The Node.js consumer project, where the released `@klutch/pulumi` resolves. */
  nodeProject(): string;
  /** GOPROXY and GONOSUMDB that fetch the Go SDK from the release's module proxy folder. */
  goFromRelease(): NodeJS.ProcessEnv;
}

type Outputs = { serviceName: string; ports: Record<string, number> };

/**
 * The network-path example of each language, as a user copies it out of examples/: the
 * TypeScript and Python ones run against the local cluster through their Automation API (the
 * module run as the CLI's language host would run it: no pulumi-language-nodejs or -python is
 * built here), the YAML one by the CLI itself, the Go one built and vetted on the released module
 * (no pulumi-language-go here to run it). The C# one is not compiled: this machine has no .NET SDK
 * (programs/klutch-provider/csharp-example.test.ts checks its names against the generated SDK).
 */
export function exampleCases(ctx: ExamplesContext): void {
  describe("the network-path example of each language (examples/network-path)", () => {
    const run = ctx.exec;
    const config = () => ({
      kubeconfigPath: ctx.kubeconfigPath(),
      instanceHost: "127.0.0.1",
      instancePort: ctx.postgresPort(),
      namespace: NAMESPACE,
      // The local cluster runs no kubelet: apply without waiting for pods.
      skipAwait: true,
    });
    /** A project folder outside the repository with the example's files (and its Pulumi.yaml). */
    const copyOut = (language: string): string => {
      const dir = path.join(ctx.work(), `example-${language}`);
      fs.cpSync(path.join(EXAMPLES, language), dir, { recursive: true });
      return dir;
    };
    /** The path the example made: its Service on the cluster, on the port it reports. */
    const assertServed = (outputs: Outputs) => {
      const port = outputs.ports["team-a/orders-db"];
      assert.ok(port, JSON.stringify(outputs));
      const svc = kubectlJson<{ spec: { ports: { port: number }[] } }>(ctx.kubeconfigPath(), [
        ...["-n", NAMESPACE, "get", "service", outputs.serviceName],
      ]);
      assert.deepEqual(
        svc.spec.ports.map((p) => p.port),
        [port],
      );
    };
    const assertGone = (outputs: Outputs) => {
      const r = kubectlTry(ctx.kubeconfigPath(), ["-n", NAMESPACE, "get", "service", outputs.serviceName]);
      assert.match(r.stderr, /NotFound/, r.stdout);
    };

    before(() => {
      kubectl(ctx.kubeconfigPath(), ["create", "namespace", NAMESPACE]);
    });

    it("typescript: `up` makes the path, `destroy` removes it", async () => {
      const project = ctx.nodeProject();
      fs.copyFileSync(path.join(EXAMPLES, "typescript", "index.ts"), path.join(project, "network-path.ts"));
      const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
      run(process.execPath, [tsc, ...TSC_FLAGS, "--outDir", "out-example", "network-path.ts"], project);
      const workDir = copyOut("typescript");
      const stack = await LocalWorkspace.createOrSelectStack(
        {
          stackName: "example-typescript",
          projectName: PROJECT,
          // The compiled module run once, as the language host runs a program: its exports are
          // the stack's outputs.
          program: () =>
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            Promise.resolve(require(path.join(project, "out-example", "network-path.js")) as object),
        },
        await ctx.workspaceOptions(workDir),
      );
      await stack.setAllConfig(
        Object.fromEntries(Object.entries(config()).map(([k, v]) => [k, { value: String(v) }])),
      );
      const res = await stack.up();
      const outputs = Object.fromEntries(
        Object.entries(res.outputs).map(([k, o]) => [k, o.value]),
      ) as Outputs;
      assertServed(outputs);
      await stack.destroy();
      assertGone(outputs);
    });

    it("python: `up` makes the path, `destroy` removes it", () => {
      const source = copyOut("python");
      const workDir = path.join(ctx.work(), "example-python-project");
      fs.mkdirSync(workDir, { recursive: true });
      fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), stringify({ name: PROJECT, runtime: "python" }));
      const params = path.join(ctx.work(), "example-python.json");
      fs.writeFileSync(params, JSON.stringify({ stackName: "example-python", workDir, config: config() }));
      const consumer = path.join(ctx.work(), "consumer.py");
      const up = JSON.parse(
        run(ctx.venvPython(), [consumer, "up", params, source], ctx.work()).trim().split("\n").pop()!,
      ) as { outputs: Record<string, { value: unknown }> };
      const outputs = Object.fromEntries(Object.entries(up.outputs).map(([k, o]) => [k, o.value])) as Outputs;
      assertServed(outputs);
      run(ctx.venvPython(), [consumer, "destroy", params, source], ctx.work());
      assertGone(outputs);
    });

    it("yaml: `pulumi up` makes the path, `pulumi destroy` removes it", () => {
      const dir = copyOut("yaml");
      const stack = ["--stack", "example-yaml", "--non-interactive"];
      run("pulumi", ["stack", "init", ...stack], dir);
      for (const [key, value] of Object.entries(config()))
        run("pulumi", ["config", "set", key, String(value), ...stack], dir);
      run("pulumi", ["up", "--yes", "--skip-preview", ...stack], dir);
      const outputs = JSON.parse(run("pulumi", ["stack", "output", "--json", ...stack], dir)) as Outputs;
      assertServed(outputs);
      run("pulumi", ["destroy", "--yes", ...stack], dir);
      assertGone(outputs);
    });

    it("go: builds and vets on the released module", () => {
      const dir = copyOut("go");
      run("go", ["vet", "."], dir, ctx.goFromRelease());
      run("go", ["build", "-trimpath", "-o", "network-path", "."], dir, ctx.goFromRelease());
      assert.ok(fs.statSync(path.join(dir, "network-path")).size > 0);
    });
  });
}

/**
 * How the TypeScript example compiles: strict, CommonJS (no package.json in the project says
 * otherwise), resolved as Node.js resolves it, as examples/network-path/typescript expects. The
 * file named is the whole program: the consumer's tsconfig.json beside it is not read, which
 * TypeScript 6 wants said (`--ignoreConfig`, else error TS5112).
 */
export const TSC_FLAGS = [
  ...["--strict", "--target", "ES2022", "--module", "nodenext", "--types", "node"],
  "--ignoreConfig",
];
