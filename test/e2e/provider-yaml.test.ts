import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { parse, stringify } from "yaml";
import { LocalClusters } from "../../host/local-clusters";
import { ensureKubernetesPlugin } from "../../host/automation/pulumi-runner";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { release } from "../../programs/release/release";
import { releaseVersion } from "../../programs/release/version";
import { kubectlJson } from "../helpers/kubectl";
import { installBindCrds } from "../helpers/bind-crds";
import { Postgres, assertPsqlAnswers, freePortRange, waitFor } from "../helpers/pg-haproxy";
import { YamlProgram } from "../helpers/yaml-program";
import { portsFor } from "../helpers/ports";
import { pathOutside } from "../helpers/processes";

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

const CLUSTER = "yaml-cp";

/**
 * The klutch component provider through the real engine from a Pulumi YAML program
 * (examples/yaml): the toolchain's YAML language host, the provider plugin
 * (programs/klutch-provider/plugin/pulumi-resource-klutch), a local cluster, PostgreSQL and HAProxy processes.
 */
describe("klutch provider from Pulumi YAML (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-provider-yaml-"));
  const program = new YamlProgram("yaml", work);
  let clusters: LocalClusters | undefined;
  let pg: Postgres | undefined;
  let portRange = { from: 0, to: 0 };

  const pulumi = (args: string[]) => program.run(args);
  const ok = (args: string[]) => program.ok(args);
  const config = (key: string, value: string) => program.config(key, value);

  before(async function () {
    this.timeout(40 * 60_000);
    clusters = new LocalClusters(path.join(work, "clusters"));
    await clusters.up([CLUSTER]);
    // The environment installs the bind CRDs with the backend; this cluster has none.
    await installBindCrds(clusters.kubeconfigPath(CLUSTER), "10s");
    pg = await Postgres.start();
    program.prepare();
    portRange = await freePortRange(8, hostPorts);
    config("kubeconfigPath", clusters.kubeconfigPath(CLUSTER));
    config("postgresPort", String(pg.port));
    config("proxyPortFrom", String(portRange.from));
    config("proxyPortTo", String(portRange.to));
    config("proxyStateDir", path.join(work, "proxy"));
  });

  after(async function () {
    this.timeout(10 * 60_000);
    // Whatever a failed test left: destroy stops the HAProxy process and empties the cluster.
    program.cleanUp();
    if (pg) await pg.destroy();
    if (clusters) await clusters.down({ purge: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("previews the YAML program's klutch components", () => {
    const out = ok(["preview", "--diff"]);
    for (const t of [
      "klutch:cluster:LocalCluster",
      "klutch:network:TcpProxy",
      "klutch:network:LocalTcpProxy",
      "klutch:bind:ExportedApi",
    ])
      assert.match(out, new RegExp(t), out);
  });

  it("`up` creates them, the kubeconfig stays a secret, and psql goes through the YAML program's proxy", async () => {
    ok(["up", "--yes", "--skip-preview"]);
    const outputs = program.outputs();
    assert.equal(outputs.kubeconfig, "[secret]", "the kubeconfig output must stay a secret");
    const state = ok(["stack", "export"]);
    const kubeconfigText = fs.readFileSync(clusters!.kubeconfigPath(CLUSTER), "utf8");
    const clientKey = /client-key-data: (\S+)/.exec(kubeconfigText)?.[1];
    if (clientKey)
      assert.ok(!state.includes(clientKey), "the cluster's client key is in the state in plain text");

    // The TcpProxy's Kubernetes objects are on the cluster.
    const kc = clusters!.kubeconfigPath(CLUSTER);
    const svc = kubectlJson<{ spec: { ports: { port: number }[] } }>(kc, [
      "-n",
      "default",
      "get",
      "service",
      "proxy",
    ]);
    const assignments = outputs.proxyAssignments as Record<string, number>;
    assert.deepEqual(
      svc.spec.ports.map((p) => p.port),
      [assignments["team-a/pg-1"]],
    );
    const template = kubectlJson<{ spec: { resources: { resource: string }[] } }>(kc, [
      "-n",
      "default",
      "get",
      "apiserviceexporttemplates",
      outputs.templateName as string,
    ]);
    assert.ok(template);

    // The local path: psql through the HAProxy process the YAML program made.
    const endpoint = (outputs.endpoints as Record<string, { hostForConsumer: string; port: number }>)[
      "team-a/pg-1"
    ];
    assert.ok(endpoint, JSON.stringify(outputs.endpoints));
    await assertPsqlAnswers(endpoint);
  });

  it("a second `up` with nothing changed changes nothing", () => {
    const preview = ok(["preview", "--expect-no-changes"]);
    assert.doesNotMatch(preview, /\+ |~ |- /);
    const out = ok(["up", "--yes", "--expect-no-changes", "--skip-preview"]);
    assert.match(out, /unchanged/);
  });

  it("bad input through the provider fails with one message naming the field, before anything changes", () => {
    const before = program.resources();
    config("proxyPortFrom", "70000");
    try {
      const r = pulumi(["up", "--yes", "--skip-preview"]);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /LocalTcpProxy localProxy: invalid arguments:/);
      assert.match(r.out, /portRange/);
      assert.match(r.out, /70000/);
      assert.deepEqual(program.resources(), before);
    } finally {
      config("proxyPortFrom", String(portRange.from));
    }
  });

  it("`destroy` removes everything: the Kubernetes objects and the HAProxy process", async () => {
    const pidFile = path.join(work, "proxy", "haproxy.pid");
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    const destroyed = ok(["destroy", "--yes", "--skip-preview"]);
    // Gone, or a zombie: HAProxy daemonizes, so an exited one waits for this machine's init to reap it.
    const running = () => {
      try {
        return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      } catch {
        return false;
      }
    };
    await waitFor(`HAProxy ${pid} to stop after destroy:\n${destroyed}`, 60_000, () => !running());
    const kc = clusters!.kubeconfigPath(CLUSTER);
    const services = kubectlJson<{ items: { metadata: { name: string } }[] }>(kc, [
      "-n",
      "default",
      "get",
      "services",
    ]);
    assert.ok(!services.items.some((s) => s.metadata.name === "proxy"));
  });
  /**
   * The release archive (`npm run release`) used the way a user who never cloned this repository
   * uses it: installed with `pulumi plugin install` into a PULUMI_HOME of its own, the YAML
   * program copied out of the repository without its `plugins` path, and no PATH or NODE_PATH
   * entry inside the repository. Same cluster and PostgreSQL as above, after their `destroy`.
   */
  describe("the release archive, outside the repository", () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-release-"));
    const projectDir = path.join(outside, "program");
    const version = releaseVersion();
    const toolchain = toolchainEnv();
    const env: NodeJS.ProcessEnv = {
      ...toolchain,
      PATH: pathOutside(repoRoot, toolchain.PATH),
      NODE_PATH: "",
      PULUMI_HOME: path.join(outside, "home"),
      PULUMI_BACKEND_URL: `file://${path.join(outside, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "release-e2e",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
    };
    const cli = (args: string[]) => {
      const r = spawnSync("pulumi", [...args, "--non-interactive", "--color", "never"], {
        cwd: projectDir,
        env,
        encoding: "utf8",
        maxBuffer: 64 << 20,
      });
      const out = `${r.stdout}\n${r.stderr}`;
      assert.equal(r.status, 0, `pulumi ${args.join(" ")}:\n${out}`);
      return out;
    };
    let archive = "";
    let sha256 = "";
    let bridgeDigest: string | undefined;

    before(async function () {
      this.timeout(5 * 60_000);
      const built = await release({
        root: repoRoot,
        outDir: path.join(outside, "dist"),
        log: () => undefined,
      });
      archive = built.archive;
      sha256 = built.sha256;
      bridgeDigest = built.bridgeImage?.manifestDigest;
      fs.mkdirSync(projectDir, { recursive: true });
      fs.mkdirSync(path.join(outside, "state"));
      const project = parse(
        fs.readFileSync(path.join(repoRoot, "examples", "yaml", "Pulumi.yaml"), "utf8"),
      ) as Record<string, unknown>;
      delete project.plugins;
      fs.writeFileSync(path.join(projectDir, "Pulumi.yaml"), stringify(project));
    });

    after(() => {
      spawnSync("pulumi", ["destroy", "--yes", "--stack", "release", "--non-interactive"], {
        cwd: projectDir,
        env,
      });
      fs.rmSync(outside, { recursive: true, force: true });
    });

    it("is reproducible: a second build of the commit gives the same bytes", async () => {
      const again = await release({
        root: repoRoot,
        outDir: path.join(outside, "again"),
        log: () => undefined,
      });
      // Every file: the plugin archives (5 platforms), the npm package, the wheel, the sdist, the
      // Go module (3 files), the .NET project, the bridge image, the Function package and IMAGES,
      // which pins the image by its digest.
      assert.deepEqual(Object.keys(again.files).length, 15, JSON.stringify(again.files));
      assert.equal(again.bridgeImage?.manifestDigest, bridgeDigest);
      assert.equal(
        fs.readFileSync(path.join(outside, "again", "SHA256SUMS"), "utf8"),
        fs.readFileSync(path.join(outside, "dist", "SHA256SUMS"), "utf8"),
      );
      assert.equal(again.sha256, sha256);
    });

    it("installs with `pulumi plugin install` and reports its version", () => {
      cli(["plugin", "install", "resource", "klutch", version, "--file", archive]);
      ensureKubernetesPlugin(env);
      const plugins = JSON.parse(cli(["plugin", "ls", "--json"]).split("\n\n")[0]!) as {
        name: string;
        version: string;
      }[];
      assert.ok(
        plugins.some((p) => p.name === "klutch" && p.version === version),
        JSON.stringify(plugins),
      );
      const launcher = path.join(
        env.PULUMI_HOME!,
        "plugins",
        `resource-klutch-v${version}`,
        "pulumi-resource-klutch",
      );
      const listed = execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).trim().split("\n").sort();
      assert.deepEqual(listed, ["provider.js", "pulumi-resource-klutch"]);
      assert.ok(fs.existsSync(launcher), launcher);
      // The running plugin's own word (GetSchema), not only the directory it was installed into.
      const schema = JSON.parse(cli(["package", "get-schema", "klutch"])) as {
        name: string;
        version: string;
      };
      assert.deepEqual([schema.name, schema.version], ["klutch", version]);
    });

    it("runs the YAML program: `up`, an `up` with no change, `destroy`", async () => {
      cli(["stack", "init", "release"]);
      const range = await freePortRange(8, hostPorts);
      for (const [k, v] of [
        ["kubeconfigPath", clusters!.kubeconfigPath(CLUSTER)],
        ["postgresPort", String(pg!.port)],
        ["proxyPortFrom", String(range.from)],
        ["proxyPortTo", String(range.to)],
        ["proxyStateDir", path.join(outside, "proxy")],
      ])
        cli(["config", "set", k!, v!]);
      cli(["up", "--yes", "--skip-preview"]);
      const state = cli(["stack", "export"]);
      assert.match(state, /"type": "klutch:internal:LocalHaproxy"/);
      assert.ok(!state.includes("pulumi-nodejs:dynamic"), "a dynamic resource in the state");
      const outputs = JSON.parse(cli(["stack", "output", "--json"]).trim().split("\n\n")[0]!) as {
        endpoints: Record<string, { hostForConsumer: string; port: number }>;
      };
      const endpoint = outputs.endpoints["team-a/pg-1"];
      assert.ok(endpoint, JSON.stringify(outputs));
      await assertPsqlAnswers(endpoint);
      assert.match(cli(["up", "--yes", "--expect-no-changes", "--skip-preview"]), /unchanged/);
      cli(["destroy", "--yes", "--skip-preview"]);
    });
  });
});
