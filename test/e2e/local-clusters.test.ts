import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { toolchainEnv } from "../../host/automation/toolchain";
import { LOCAL_UPGRADE_REMEDY } from "../../components/crossplane/crossplane";
import { crossplaneUpgradeGuardProvider } from "../../providers/dynamic/crossplane-upgrade-guard";
import { packagePauseProvider } from "../../providers/dynamic/package-pause";
import { LocalClusters, type ClusterInfo, type ClusterStatus } from "../../host/local-clusters";
import { eventually, kubectl, kubectlApply, kubectlTry } from "../helpers/kubectl";
import { gone } from "../helpers/processes";

function pidsOf(status: ClusterStatus): number[] {
  return Object.values(status.components).flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
}

/**
 * Real local clusters end to end: two clusters (a control plane and an app cluster) from
 * nothing, their independence, RBAC and the controller-manager at work, recovery from a crash,
 * from a half-dead cluster and from a port taken by someone else, and a `down` that leaves no
 * process behind.
 */
describe("local clusters (e2e)", function () {
  this.timeout(10 * 60_000);

  const names = ["control-plane", "app-1"];
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-clusters-"));
  const clusters = new LocalClusters(stateDir);
  const kubeconfig = (name: string) => clusters.kubeconfigPath(name);
  let first: ClusterInfo[];

  const statusOf = async (name: string): Promise<ClusterStatus> => {
    const found = (await clusters.status()).find((s) => s.name === name);
    assert.ok(found, `no status for ${name}`);
    return found;
  };
  const readyz = (name: string) => kubectl(kubeconfig(name), ["get", "--raw", "/readyz"]).trim();
  const killAll = async (name: string) => {
    const pids = pidsOf(await statusOf(name));
    assert.equal(pids.length, 3);
    pids.forEach((pid) => process.kill(pid, "SIGKILL"));
    await eventually(`${name}'s processes to die`, () => pids.every(gone), 10_000);
  };

  before(async () => {
    first = await clusters.up(names);
  });

  after(async () => {
    // Safety net when a test failed half-way; the last test checks `down` itself.
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("gives each cluster its own ports, certificates and 0600 kubeconfig", () => {
    assert.deepEqual(
      first.map((i) => [i.name, i.started]),
      names.map((n) => [n, true]),
    );
    const ports = first.flatMap((i) => Object.values(i.ports));
    assert.equal(new Set(ports).size, ports.length, `ports shared between clusters: ${ports.join(",")}`);
    for (const info of first) {
      assert.equal(info.kubeconfig, path.join(stateDir, info.name, "kubeconfig"));
      assert.equal(fs.statSync(info.kubeconfig).mode & 0o777, 0o600);
      const config = kubectl(info.kubeconfig, ["config", "view", "--raw", "-o", "json"]);
      const parsed = JSON.parse(config);
      assert.equal(parsed["current-context"], info.name);
      assert.equal(parsed.clusters[0].name, info.name);
      assert.equal(parsed.clusters[0].cluster.server, info.apiServerUrl);
      assert.ok(parsed.users[0].user["client-key-data"], "admin key embedded");
      for (const dir of ["pki", "etcd", "logs", "pids"]) {
        assert.ok(fs.existsSync(path.join(stateDir, info.name, dir)), `${info.name}/${dir}`);
      }
    }
    const ca = (name: string) => fs.readFileSync(path.join(stateDir, name, "pki", "ca.crt"), "utf8");
    assert.notEqual(ca("control-plane"), ca("app-1"), "each cluster has its own CA");
  });

  it("both API servers are ready and list the default namespace", () => {
    for (const name of names) {
      assert.equal(readyz(name), "ok");
      const namespaces = kubectl(kubeconfig(name), ["get", "ns", "-o", "name"]);
      assert.match(namespaces, /^namespace\/default$/m);
    }
  });

  it("enforces RBAC and accepts the service account tokens it signs", async () => {
    const kc = kubeconfig("app-1");
    const canI = kubectlTry(kc, [
      "auth",
      "can-i",
      "create",
      "namespaces",
      "--as=system:serviceaccount:default:default",
    ]);
    assert.equal(canI.stdout.trim(), "no");
    // The controller-manager creates the default service account; a token for it must
    // authenticate (issuer, audience and signing key agree) and then be denied.
    await eventually(
      "the default service account",
      () => kubectlTry(kc, ["get", "sa", "default"]).status === 0,
    );
    const token = kubectl(kc, ["create", "token", "default"]).trim();
    const info = first.find((i) => i.name === "app-1") as ClusterInfo;
    const asToken = [
      `--server=${info.apiServerUrl}`,
      `--certificate-authority=${path.join(stateDir, "app-1", "pki", "ca.crt")}`,
      `--token=${token}`,
    ];
    const whoami = kubectl("/dev/null", [
      "auth",
      "whoami",
      ...asToken,
      "-o",
      "jsonpath={.status.userInfo.username}",
    ]);
    assert.equal(whoami, "system:serviceaccount:default:default");
    const denied = kubectlTry("/dev/null", ["get", "namespaces", ...asToken]);
    assert.notEqual(denied.status, 0);
    assert.match(denied.stderr, /forbidden/i);
  });

  it("keeps the clusters independent, and the controller-manager finishes namespace deletion", async () => {
    kubectl(kubeconfig("control-plane"), ["create", "namespace", "only-on-control-plane"]);
    kubectl(kubeconfig("control-plane"), ["get", "namespace", "only-on-control-plane"]);
    assert.notEqual(kubectlTry(kubeconfig("app-1"), ["get", "namespace", "only-on-control-plane"]).status, 0);

    // Deletion only completes once the namespace controller has emptied the namespace and
    // removed its finalizer: proof that kube-controller-manager runs and may act.
    kubectl(kubeconfig("control-plane"), ["delete", "namespace", "only-on-control-plane", "--wait=false"]);
    await eventually(
      "the namespace to disappear",
      () =>
        kubectlTry(kubeconfig("control-plane"), ["get", "namespace", "only-on-control-plane"]).status !== 0,
      60_000,
    );
  });

  it("PackagePause pauses a Configuration's package manager on delete and resumes it on create; a missing one is no error", async () => {
    // Crossplane's Configuration CRD from the toolchain's Crossplane module; no Crossplane runs here,
    // so only the provider's requests and the API server's answers are at work.
    const cp = kubeconfig("control-plane");
    const crds = path.join(toolchainEnv().KLUTCH_CROSSPLANE_CLUSTER_DIR ?? "", "crds");
    kubectl(cp, ["apply", "--server-side", "-f", path.join(crds, "pkg.crossplane.io_configurations.yaml")]);
    kubectl(cp, ["wait", "--for=condition=Established", "crd/configurations.pkg.crossplane.io"]);
    const applied = kubectlApply(
      cp,
      "apiVersion: pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: klutch-things\nspec:\n  package: registry.local/klutch/things:v1\n",
    );
    assert.equal(applied.status, 0, applied.stderr);
    const paused = () =>
      kubectl(cp, [
        "get",
        "configuration",
        "klutch-things",
        "-o",
        "jsonpath={.metadata.annotations.crossplane\\.io/paused}",
      ]);
    const inputs = { kubeconfig: fs.readFileSync(cp, "utf8"), configuration: "klutch-things" };
    await packagePauseProvider.delete("klutch-things", inputs);
    assert.equal(paused(), "true");
    await packagePauseProvider.create(inputs);
    assert.equal(paused(), "");
    await packagePauseProvider.delete("gone", { ...inputs, configuration: "not-there" });
  });

  it("CrossplaneUpgradeGuard reads the running core from the API server: one minor up passes, a skipped minor and a downgrade are refused", async () => {
    const cp = kubeconfig("control-plane");
    kubectl(cp, ["create", "namespace", "upgrade-guard"]);
    const inputs = { kubeconfig: fs.readFileSync(cp, "utf8"), namespace: "upgrade-guard" };
    // No core yet: nothing to judge.
    await crossplaneUpgradeGuardProvider.create({ ...inputs, version: "2.4.0" });
    // The chart's Deployment as the local nodes run it (no pod needs to start for the guard).
    kubectl(cp, [
      "-n",
      "upgrade-guard",
      "create",
      "deployment",
      "crossplane",
      "--image=klutch.local/crossplane:1.20.11-0a1b2c3d4e5f",
      "--replicas=0",
    ]);
    const olds = { ...inputs, version: "1.20.11" };
    await crossplaneUpgradeGuardProvider.update("upgrade-guard/crossplane", olds, {
      ...inputs,
      version: "2.0.2",
    });
    await assert.rejects(
      crossplaneUpgradeGuardProvider.update("upgrade-guard/crossplane", olds, {
        ...inputs,
        version: "2.4.0",
      }),
      /^Error: klutch:crossplane\.version is 2\.4\.0, but the control plane runs Crossplane 1\.20\.11 and Crossplane upgrades one minor at a time: run up with crossplane\.version set to each of 2\.0\.x, 2\.1\.x, 2\.2\.x, 2\.3\.x, 2\.4\.x in turn/,
    );
    await assert.rejects(
      crossplaneUpgradeGuardProvider.create({ ...inputs, version: "1.19.3", remedy: LOCAL_UPGRADE_REMEDY }),
      (e: Error) =>
        /runs Crossplane 1\.20\.11 and Crossplane has no downgrade/.test(e.message) &&
        e.message.endsWith(`. ${LOCAL_UPGRADE_REMEDY}`),
    );
    kubectl(cp, ["delete", "namespace", "upgrade-guard", "--wait=false"]);
  });

  it("leaves healthy clusters alone on a second `up`", async () => {
    const again = await clusters.up(names);
    assert.deepEqual(
      again.map((i) => i.started),
      [false, false],
    );
    assert.deepEqual(
      again.map((i) => i.pids),
      first.map((i) => i.pids),
    );
  });

  it("recovers from a crash that left stale pid files, with the same kubeconfig and data", async () => {
    kubectl(kubeconfig("app-1"), ["create", "namespace", "survives-crash"]);
    const before = fs.readFileSync(kubeconfig("app-1"), "utf8");
    await killAll("app-1");
    assert.ok(
      fs.existsSync(path.join(stateDir, "app-1", "pids", "kube-apiserver.pid")),
      "stale pid file stays",
    );
    assert.equal((await statusOf("app-1")).healthy, false);

    const infos = await clusters.up(names);
    assert.deepEqual(
      infos.map((i) => [i.name, i.started]),
      [
        ["control-plane", false],
        ["app-1", true],
      ],
    );
    assert.equal(fs.readFileSync(kubeconfig("app-1"), "utf8"), before, "kubeconfig unchanged");
    assert.equal(readyz("app-1"), "ok");
    kubectl(kubeconfig("app-1"), ["get", "namespace", "survives-crash"]);
  });

  it("restarts a half-running cluster (etcd alive, API server dead) cleanly", async () => {
    const status = await statusOf("app-1");
    const apiServer = status.components["kube-apiserver"].pid as number;
    const etcd = status.components.etcd.pid as number;
    process.kill(apiServer, "SIGKILL");
    await eventually("the API server to die", () => gone(apiServer), 10_000);

    const [info] = await clusters.up(["app-1"]);
    assert.equal(info?.started, true);
    assert.ok(gone(etcd), "the old etcd was stopped, not reused");
    assert.equal(readyz("app-1"), "ok");
    assert.equal((await statusOf("app-1")).healthy, true);
  });

  it("moves a dead cluster off a port a foreign process now listens on, and rewrites its kubeconfig", async () => {
    const oldUrl = (await statusOf("app-1")).apiServerUrl as string;
    const oldPort = Number(new URL(oldUrl).port);
    await killAll("app-1");
    const foreign = net.createServer((socket) => socket.destroy());
    // The killed API server's sockets can hold the port for a moment after the process is
    // gone (its last connections closing); keep trying to take it, briefly.
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        await new Promise<void>((resolve, reject) => {
          foreign.once("error", reject);
          foreign.listen(oldPort, "127.0.0.1", () => {
            foreign.removeListener("error", reject);
            resolve();
          });
        });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    try {
      const [info] = await clusters.up(["app-1"]);
      assert.ok(info);
      assert.notEqual(info.ports.apiServer, oldPort);
      assert.equal(info.apiServerUrl, `https://127.0.0.1:${info.ports.apiServer}`);
      const ports = JSON.parse(fs.readFileSync(path.join(stateDir, "app-1", "ports.json"), "utf8"));
      assert.equal(ports.apiServer, info.ports.apiServer, "ports.json persisted");
      const server = kubectl(kubeconfig("app-1"), [
        "config",
        "view",
        "-o",
        "jsonpath={.clusters[0].cluster.server}",
      ]);
      assert.equal(server, info.apiServerUrl);
      assert.equal(readyz("app-1"), "ok");
      kubectl(kubeconfig("app-1"), ["get", "namespace", "survives-crash"]);
      assert.ok(foreign.listening, "the foreign listener was left alone");
    } finally {
      await new Promise((resolve) => foreign.close(resolve));
    }
  });

  it("`down` stops every process and leaves none behind", async () => {
    const pids = (await clusters.status()).flatMap(pidsOf);
    assert.equal(pids.length, 6);
    await clusters.down();
    assert.deepEqual(clusters.leftoverProcesses(), []);
    assert.deepEqual(
      pids.filter((pid) => !gone(pid)),
      [],
      "pids still alive",
    );
    for (const name of names) {
      assert.deepEqual(fs.readdirSync(path.join(stateDir, name, "pids")), [], `${name} pid files removed`);
    }
    const statuses = await clusters.status();
    assert.ok(statuses.every((s) => !s.healthy));
  });
});
