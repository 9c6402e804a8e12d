import { strict as assert } from "node:assert";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  LocalWorkspace,
  PulumiCommand,
  type LocalWorkspaceOptions,
  type PulumiFn,
} from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { LocalClusters } from "../../host/local-clusters";
import { SDK_DIR } from "../../programs/klutch-provider/sdk-files";
import { ensureKubernetesPlugin } from "../../host/automation/pulumi-runner";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { GO_SDK_MODULE } from "../../lib/release/publication";
import { release, type ReleaseResult } from "../../programs/release/release";
import { releaseVersion } from "../../programs/release/version";
import { exampleCases } from "./provider-sdks/examples";
import { environmentExampleCases } from "./provider-sdks/environment-examples";
import { pluginDownloadCases } from "./provider-sdks/plugin-download";
import type { Consumer, Language, SdkParams, UpReport } from "./provider-sdks/consumer";
import { kubectl, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { installBindCrds } from "../helpers/bind-crds";
import { Postgres, assertPsqlAnswers, freePortRange, waitFor } from "../helpers/pg-haproxy";
import { portsFor } from "../helpers/ports";
import { startReleaseServer, type ReleaseServer } from "../helpers/release-server";
import { pathOutside } from "../helpers/processes";

const execFileAsync = promisify(execFile);

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

const CLUSTER = "sdk-cp";
const LANGUAGES = ["go", "python", "nodejs"] as const satisfies readonly Language[];
const VERSION = releaseVersion();
const CONSUMERS = path.join(repoRoot, "test", "sdk");
const VERSIONS_ENV = fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8");
const PULUMI_VERSION = /^PULUMI_VERSION=(\S+)$/m.exec(VERSIONS_ENV)![1]!;
/** PyPI lags the CLI, so the Python SDK has a pin of its own (versions.env). */
const PULUMI_PYTHON_VERSION = /^PULUMI_PYTHON_VERSION=(\S+)$/m.exec(VERSIONS_ENV)![1]!;

/**
 * A Go or Python program's environment names nothing of this checkout besides the plugin: the
 * resources the components make (TcpProxy's port allocation, LocalTcpProxy's HAProxy process)
 * are `klutch:internal:*` resources the plugin serves itself (programs/klutch-provider/internal-resources.ts),
 * not dynamic resources the engine would run through pulumi-resource-pulumi-nodejs, which resolves
 * `@pulumi/pulumi/cmd/dynamic-provider` from the program's directory. An empty NODE_PATH makes
 * sure no module path of this checkout leaks in from the test's own environment.
 */
const NON_NODE_PROGRAM_ENV = { NODE_PATH: "" };

/**
 * The klutch provider's generated SDKs (sdk/<language>) used from programs in Go, Python
 * and TypeScript (test/sdk/<language>), each run through its language's Automation API as an inline
 * program against the real engine, the klutch plugin installed from the release archive
 * (`npm run release`) and one local cluster with PostgreSQL: the Go SDK built against
 * github.com/pulumi/pulumi/sdk/v3, the Python SDK as the release's wheel installed by pip into a
 * fresh venv (its dependencies from PyPI) and run outside the repository, the Node.js SDK as the
 * release's npm package. Per
 * language: `up` (the components' outputs through
 * the SDK's output types, the kubeconfig a secret in the outputs and the state, psql through the
 * local proxy, the Service and the APIServiceExportTemplate on the cluster), a second `up` that
 * changes nothing, and `destroy`.
 */
describe("klutch provider SDKs: Go, Python and Node.js programs through the engine (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-provider-sdks-"));
  const env: NodeJS.ProcessEnv = {
    ...toolchainEnv(),
    PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
    PULUMI_HOME: path.join(work, "home"),
    PULUMI_CONFIG_PASSPHRASE: "provider-sdks-e2e",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
    // As host/scripts/toolchain.sh builds: modules from the proxy, the pulumi ones without the sum
    // database, and the flags that let the shared Go build cache serve the SDK's packages.
    GOFLAGS: "-mod=mod",
    GOTOOLCHAIN: "local",
    GONOSUMDB: "github.com/pulumi/*,github.com/crossplane/*",
    CGO_ENABLED: "0",
    // Python writes its bytecode here, not next to the SDK's sources.
    PYTHONPYCACHEPREFIX: path.join(work, "pycache"),
  };
  let clusters: LocalClusters | undefined;
  let released: ReleaseResult | undefined;
  /** The release host the SDK packages name (their pluginDownloadURL). */
  let releaseServer: ReleaseServer | undefined;
  /** The venv's Python, once pythonConsumer has installed the wheel into it. */
  let venvPython = "";
  let pg: Postgres | undefined;
  let kubeconfigPath = "";
  const params = new Map<Language, SdkParams>();
  const consumers = new Map<Language, Consumer>();
  const haproxyPids = new Map<Language, number>();
  /** Outputs of each language's first `up`. */
  const upOutputs = new Map<Language, UpReport["outputs"]>();
  /** Stacks an `up` was started on and no `destroy` has finished. */
  const live = new Set<Language>();

  const spawnChecked = (file: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(file, args, {
      cwd,
      env: { ...env, ...extra },
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, `${file} ${args.join(" ")} failed:\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  const exec = (file: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) =>
    spawnChecked(file, args, cwd, extra).stdout;
  const spawn = (file: string, args: string[], cwd: string) =>
    spawnSync(file, args, { cwd, env, encoding: "utf8", maxBuffer: 64 << 20 });
  let cli: PulumiCommand | undefined;
  /** An inline program's workspace in `workDir`: the toolchain's CLI, this file's environment and `extra`. */
  const workspaceOptions = async (
    workDir: string,
    extra: NodeJS.ProcessEnv = {},
  ): Promise<LocalWorkspaceOptions> => {
    cli ??= await PulumiCommand.get({
      root: path.dirname(path.dirname(exec("which", ["pulumi"], work).trim())),
      version: undefined,
    });
    const envVars = Object.fromEntries(
      Object.entries({ ...env, ...extra }).filter((e): e is [string, string] => e[1] !== undefined),
    );
    return { workDir, envVars, pulumiCommand: cli };
  };
  /** What a Go or Python program reports: JSON last on stdout, the engine's progress on stderr. */
  const report = ({ stdout, stderr }: { stdout: string; stderr: string }): UpReport => ({
    ...(JSON.parse(stdout.trim().split("\n").pop()!) as Omit<UpReport, "progress">),
    progress: stderr,
  });
  const writeParams = (p: SdkParams) => {
    const file = path.join(work, `${p.stackName}.json`);
    fs.writeFileSync(file, JSON.stringify(p));
    return file;
  };

  before(async function () {
    this.timeout(40 * 60_000);
    // Build what is missing only: a warm cache needs no build lock (another run may hold it).
    const toolchain = path.join(repoRoot, "host", "scripts", "toolchain.sh");
    const status = execFileSync("bash", [toolchain, "status"], { encoding: "utf8" });
    for (const [part, entry] of [
      ["pulumi", "/pulumi-3"],
      ["pulumi-kubernetes", "/pulumi-resource-kubernetes-"],
      ["python", "/python-pulumi-"],
      // The YAML example runs through the CLI's YAML language host.
      ["pulumi-yaml", "/pulumi-language-yaml-"],
    ] as const) {
      if (status.split("\n").some((l) => l.includes(entry) && /missing$/.test(l.trim())))
        execFileSync("bash", [toolchain, "build", part], { stdio: "inherit" });
    }
    fs.mkdirSync(path.join(work, "state"), { recursive: true });
    ensureKubernetesPlugin(env);
    clusters = new LocalClusters(path.join(work, "clusters"));
    await clusters.up([CLUSTER]);
    kubeconfigPath = clusters.kubeconfigPath(CLUSTER);
    await installBindCrds(kubeconfigPath, "60s");
    // The release: the plugin installed from its archive into this PULUMI_HOME, as a user outside
    // this repository installs it; the programs name no plugin path. The SDK packages from it too,
    // naming this file's release host as the plugin's download URL (the last tests use it).
    releaseServer = await startReleaseServer(path.join(work, "dist"), VERSION);
    released = await release({
      root: repoRoot,
      outDir: path.join(work, "dist"),
      log: () => undefined,
      env,
      images: false,
      pluginDownloadURL: releaseServer.url,
    });
    execFileSync("pulumi", ["plugin", "install", "resource", "klutch", VERSION, "--file", released.archive], {
      env,
      stdio: ["ignore", "inherit", "inherit"],
    });
    pg = await Postgres.start();
    for (const language of LANGUAGES) {
      const p: SdkParams = {
        stackName: `sdk-${language}-e2e`,
        // The Node.js program's project is where its packages are installed (nodejsConsumer).
        workDir: path.join(work, language === "nodejs" ? "nodejs-consumer" : `${language}-project`),
        clusterName: CLUSTER,
        kubeconfigPath,
        namespace: `sdk-${language}`,
        postgresPort: pg.port,
        portRange: { from: 0, to: 0 },
        stateDir: path.join(work, `${language}-proxy`),
      };
      params.set(language, p);
      kubectl(kubeconfigPath, ["create", "namespace", p.namespace]);
      // The project of the inline program: its runtime and the klutch plugin from this repository.
      fs.mkdirSync(p.workDir, { recursive: true });
      fs.writeFileSync(
        path.join(p.workDir, "Pulumi.yaml"),
        stringify({
          name: `klutch-sdk-${language}`,
          runtime: language,
        }),
      );
    }
  });

  after(async function () {
    this.timeout(10 * 60_000);
    // Whatever a failed test left: destroy stops the HAProxy processes and empties the cluster.
    for (const language of live)
      await consumers
        .get(language)!
        .destroy(params.get(language)!)
        .catch((e: Error) => console.error(`${language}: destroy after the tests: ${e.message}`));
    if (pg) await pg.destroy();
    await releaseServer?.close();
    if (clusters) await clusters.down({ purge: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** GOPROXY and GONOSUMDB that fetch the Go SDK from the release's module proxy folder first. */
  const goFromRelease = (): NodeJS.ProcessEnv => ({
    GOPROXY: `file://${path.join(work, "dist", "goproxy")},${exec("go", ["env", "GOPROXY"], work).trim()}`,
    // The sum database does not know the release's module (it is not published).
    GONOSUMDB: [env.GONOSUMDB, "github.com/anynines/*"].filter(Boolean).join(","),
  });

  /**
   * Builds the Go program on the Go SDK as the release publishes it: its module fetched from the
   * release's module proxy folder (dist/goproxy) at the release's version, no `replace`.
   */
  function goConsumer(): Consumer {
    const dir = path.join(work, "go-consumer");
    fs.mkdirSync(dir, { recursive: true });
    const goLine = /^go (\S+)$/m.exec(fs.readFileSync(path.join(SDK_DIR, "go", "go.mod"), "utf8"))![1];
    fs.writeFileSync(
      path.join(dir, "go.mod"),
      [
        "module klutch.local/test/sdk-consumer",
        "",
        `go ${goLine}`,
        "",
        "require (",
        `\t${GO_SDK_MODULE} v${VERSION}`,
        `\tgithub.com/pulumi/pulumi/sdk/v3 v${PULUMI_VERSION}`,
        ")",
        "",
      ].join("\n"),
    );
    fs.copyFileSync(path.join(CONSUMERS, "go", "main.go"), path.join(dir, "main.go"));
    // The release's module first; the sum database does not know it (it is not published).
    const fromRelease = goFromRelease();
    // Every package of the SDK, then the program (which imports three of them).
    exec("go", ["build", "-trimpath", `${GO_SDK_MODULE}/...`], dir, fromRelease);
    exec("go", ["vet", `${GO_SDK_MODULE}/...`, "."], dir, fromRelease);
    exec("go", ["build", "-trimpath", "-o", "sdk-consumer", "."], dir, fromRelease);
    const sum = fs.readFileSync(path.join(dir, "go.sum"), "utf8");
    assert.match(
      sum,
      new RegExp(`^${GO_SDK_MODULE} v${VERSION} h1:`, "m"),
      "the SDK module came from the release",
    );
    const binary = path.join(dir, "sdk-consumer");
    return {
      up: (p) =>
        Promise.resolve(report(spawnChecked(binary, ["up", writeParams(p)], dir, NON_NODE_PROGRAM_ENV))),
      destroy: (p) =>
        Promise.resolve(void exec(binary, ["destroy", writeParams(p)], dir, NON_NODE_PROGRAM_ENV)),
    };
  }

  /**
   * Installs the release's Python wheel (`npm run release`) into a fresh venv as a user does:
   * `pip install <wheel>`, its declared dependencies (pyproject.toml) from PyPI. The versions pip
   * may pick are the toolchain's (python-constraints.txt, pulumi at PULUMI_PYTHON_VERSION), so a new
   * release on PyPI cannot change this test's result; whether the wheel's own requirements resolve
   * is what it proves.
   */
  function pythonConsumer(): Consumer {
    const venv = path.join(work, "python-venv");
    exec("python3", ["-m", "venv", venv], work);
    const python = path.join(venv, "bin", "python");
    venvPython = python;
    const wheel = path.join(
      work,
      "dist",
      Object.keys(released!.files).find((f) => f.endsWith(".whl"))!,
    );
    const constraints = path.join(work, "python-constraints.txt");
    fs.writeFileSync(
      constraints,
      `${fs.readFileSync(path.join(repoRoot, "host", "toolchain", "python-constraints.txt"), "utf8")}\npulumi==${PULUMI_PYTHON_VERSION}\n`,
    );
    exec(
      python,
      ["-m", "pip", "install", "-q", "--disable-pip-version-check", "-c", constraints, wheel],
      work,
    );
    const installed = exec(python, ["-m", "pip", "show", "pulumi_klutch", "pulumi"], work);
    assert.match(installed, new RegExp(`Name: pulumi_klutch\\nVersion: ${VERSION.replace(/\./g, "\\.")}`));
    // The program copied out of the repository, run with no PATH entry inside it.
    const script = path.join(work, "consumer.py");
    fs.copyFileSync(path.join(CONSUMERS, "python", "consumer.py"), script);
    const outside = { ...NON_NODE_PROGRAM_ENV, PATH: pathOutside(repoRoot, env.PATH) };
    return {
      up: (p) => Promise.resolve(report(spawnChecked(python, [script, "up", writeParams(p)], work, outside))),
      destroy: (p) => Promise.resolve(void exec(python, [script, "destroy", writeParams(p)], work, outside)),
      // Not spawnSync: the release host the engine downloads from is served by this process.
      preview: async (p, extra) => {
        const { stdout } = await execFileAsync(python, [script, "preview", writeParams(p)], {
          cwd: work,
          env: { ...env, ...outside, ...extra },
          maxBuffer: 64 << 20,
        });
        return JSON.parse(stdout.trim().split("\n").pop()!) as { changes: Record<string, number> };
      },
    };
  }

  /**
   * The release's Node.js SDK package (`npm run release` packs it as pulumi-language-nodejs Pack
   * does), unpacked into a consumer project's node_modules (what npm install does with it), whose
   * @pulumi/pulumi is this repository's; the program is type-checked and compiled there and runs
   * as an inline program of this process.
   */
  function nodejsConsumer(): Consumer {
    const nodeModules = path.join(repoRoot, "node_modules");
    const tarball = path.join(
      "dist",
      Object.keys(released!.files).find((f) => f.endsWith(".tgz"))!,
    );
    const listed = exec("tar", ["-tzf", path.join(work, tarball)], work).split("\n");
    for (const f of ["package.json", "index.js", "index.d.ts", "network/tcpProxy.js", "types/input.d.ts"])
      assert.ok(listed.includes(`package/${f}`), `${tarball} has no ${f}:\n${listed.join("\n")}`);

    const project = path.join(work, "nodejs-consumer");
    const installed = path.join(project, "node_modules", "@klutch", "pulumi");
    fs.mkdirSync(installed, { recursive: true });
    exec("tar", ["-xzf", path.join(work, tarball), "-C", installed, "--strip-components=1"], work);
    for (const scope of ["@pulumi", "@types"])
      fs.symlinkSync(path.join(nodeModules, scope), path.join(project, "node_modules", scope));
    fs.copyFileSync(path.join(CONSUMERS, "nodejs", "program.ts"), path.join(project, "program.ts"));
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: "ES2022",
          // CommonJS (the project has no package.json to say otherwise), resolved as Node.js does.
          module: "nodenext",
          types: ["node"],
          outDir: "out",
        },
        files: ["program.ts"],
      }),
    );
    exec(process.execPath, [path.join(nodeModules, "typescript", "bin", "tsc"), "-p", project], project);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { program } = require(path.join(project, "out", "program.js")) as {
      program: (p: SdkParams) => PulumiFn;
    };
    const stack = async (p: SdkParams, extra: NodeJS.ProcessEnv = {}) =>
      LocalWorkspace.createOrSelectStack(
        { stackName: p.stackName, projectName: "", program: program(p) },
        await workspaceOptions(p.workDir, extra),
      );
    return {
      up: async (p) => {
        let progress = "";
        const res = await (await stack(p)).up({ diff: true, onOutput: (out) => (progress += out) });
        const outputs = Object.fromEntries(
          Object.entries(res.outputs).map(([k, o]) => [
            k,
            o.secret ? { secret: true } : { secret: false, value: o.value },
          ]),
        );
        return { outputs, changes: res.summary.resourceChanges ?? {}, progress };
      },
      destroy: async (p) => {
        const s = await stack(p);
        await s.destroy();
        await s.workspace.removeStack(p.stackName);
      },
      preview: async (p, extra) => ({
        changes: (await (await stack(p, extra)).preview()).changeSummary ?? {},
      }),
    };
  }

  const stackExport = (p: SdkParams) =>
    exec("pulumi", ["stack", "export", "--stack", p.stackName], p.workDir);

  for (const language of LANGUAGES) {
    describe(language, () => {
      it(`the ${language} SDK builds and its program compiles against it`, () => {
        const consumer =
          language === "go" ? goConsumer() : language === "python" ? pythonConsumer() : nodejsConsumer();
        consumers.set(language, consumer);
      });

      it("`up` creates the components; outputs come back through the SDK's types, the kubeconfig stays a secret", async () => {
        const p = params.get(language)!;
        const consumer = consumers.get(language);
        assert.ok(consumer, "the program was not built");
        p.portRange = await freePortRange(8, hostPorts);
        live.add(language);
        const { outputs, changes, progress } = await consumer.up(p);
        upOutputs.set(language, outputs);
        assert.ok((changes.create ?? 0) > 4, JSON.stringify(changes));

        // A secret output of the provider (LocalCluster.kubeconfig) is a secret output of the program.
        assert.deepEqual(outputs.kubeconfig, { secret: true });
        assert.deepEqual(outputs.clusterName, { secret: false, value: CLUSTER });
        assert.deepEqual(outputs.unplaced, { secret: false, value: [] });
        // The kubeconfig handed to TcpProxy as a plain string: the SDK makes it a secret (the schema
        // marks it), so the engine's diff of the component's inputs shows [secret], never its text.
        const clientKey = /client-key-data: (\S+)/.exec(fs.readFileSync(kubeconfigPath, "utf8"))?.[1];
        assert.ok(clientKey, "the local cluster's kubeconfig has no client key");
        assert.match(progress, /klutch:network:TcpProxy/, progress);
        assert.match(progress, /kubeconfig\s*:\s*\[secret\]/, progress);
        assert.ok(!progress.includes(clientKey), "the cluster's client key is in the engine's output");
        // Nor in the state (the provider also keeps it secret in the Kubernetes provider it makes).
        const state = stackExport(p);
        assert.ok(!state.includes(clientKey), "the cluster's client key is in the state in plain text");
        assert.match(state, /"ciphertext"/);
        // The components' own resources are the plugin's, with no provider code in the state.
        for (const kind of ["PortAllocation", "LocalHaproxy"])
          assert.match(state, new RegExp(`"type": ?"klutch:internal:${kind}"`), `klutch:internal:${kind}`);
        assert.ok(!state.includes("pulumi-nodejs:dynamic"), "a dynamic resource in the state");
        assert.ok(!state.includes('"__provider"'), "serialized provider code in the state");

        // TcpProxy: the Service on the cluster has the port the proxy assigned.
        const assignments = outputs.proxyAssignments!.value as Record<string, number>;
        const svc = kubectlJson<{ spec: { ports: { port: number }[] } }>(kubeconfigPath, [
          "-n",
          p.namespace,
          "get",
          "service",
          outputs.proxyService!.value as string,
        ]);
        assert.deepEqual(
          svc.spec.ports.map((x) => x.port),
          [assignments["team-a/pg-1"]],
        );

        // ExportedApi: the template, with the plain map and list inputs in it.
        const template = kubectlJson<{
          metadata: { labels: Record<string, string> };
          spec: { permissionClaims: { resource: string; selector?: { owner?: string } }[] };
        }>(kubeconfigPath, [
          "-n",
          p.namespace,
          "get",
          "apiserviceexporttemplates",
          outputs.templateName!.value as string,
        ]);
        assert.equal(template.metadata.labels["klutch.io/sdk"], language);
        assert.deepEqual(
          template.spec.permissionClaims.map((c) => [c.resource, c.selector?.owner]),
          [["secrets", "Provider"]],
        );

        // LocalTcpProxy: an output map of the SDK's ConsumerEndpoint type; psql through HAProxy.
        const endpoint = (
          outputs.endpoints!.value as Record<string, { hostForConsumer: string; port: number }>
        )["team-a/pg-1"];
        assert.ok(endpoint, JSON.stringify(outputs.endpoints));
        assert.equal(endpoint.hostForConsumer, "127.0.0.1", JSON.stringify(outputs.endpoints));
        assert.ok(
          endpoint.port >= p.portRange.from && endpoint.port <= p.portRange.to,
          JSON.stringify(endpoint),
        );
        await assertPsqlAnswers(endpoint);
        haproxyPids.set(
          language,
          Number(fs.readFileSync(path.join(p.stateDir, "haproxy.pid"), "utf8").trim()),
        );
      });

      it("a second `up` changes nothing", async () => {
        const p = params.get(language)!;
        const consumer = consumers.get(language);
        assert.ok(consumer && haproxyPids.has(language), "the first up did not succeed");
        const { changes } = await consumer.up(p);
        assert.deepEqual(Object.keys(changes), ["same"], JSON.stringify(changes));
      });

      it("`destroy` removes the Kubernetes objects and stops HAProxy", async () => {
        const p = params.get(language)!;
        const consumer = consumers.get(language);
        const pid = haproxyPids.get(language);
        assert.ok(consumer && pid, "the first up did not succeed");
        await consumer.destroy(p);
        live.delete(language);
        // Gone, or a zombie: HAProxy daemonizes, so an exited one waits for init to reap it.
        const running = () => {
          try {
            return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
          } catch {
            return false;
          }
        };
        await waitFor(`HAProxy ${pid} to stop after destroy`, 60_000, () => !running());
        const outputs = upOutputs.get(language)!;
        for (const [kind, name] of [
          ["service", outputs.proxyService!.value],
          ["apiserviceexporttemplate", outputs.templateName!.value],
        ] as const) {
          const r = kubectlTry(kubeconfigPath, ["-n", p.namespace, "get", kind, String(name)]);
          assert.match(r.stderr, /NotFound/, `${kind} ${String(name)} is still there:\n${r.stdout}`);
        }
      });
    });
  }

  const examples = {
    work: () => work,
    exec,
    spawn,
    workspaceOptions,
    kubeconfigPath: () => kubeconfigPath,
    postgresPort: () => pg!.port,
    venvPython: () => venvPython,
    nodeProject: () => path.join(work, "nodejs-consumer"),
    goFromRelease,
  };
  exampleCases(examples);
  environmentExampleCases(examples);

  pluginDownloadCases({
    work: () => work,
    env: () => env,
    server: () => releaseServer!,
    released: () => released!,
    venvPython: () => venvPython,
    consumers,
    params: (language) => params.get(language)!,
  });
});
