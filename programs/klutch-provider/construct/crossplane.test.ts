import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { crossplaneProblems } from "./crossplane";
import { KlutchProvider } from "../provider";
import { fakeKubeconfig, loopbackKubeconfig } from "../../../test/helpers/kubeconfig";
import { COMPONENT_OWNER_LABEL } from "../../../lib/crossplane/installed-crossplane";
import { isSecretEnvelope, mockPulumi, plainStrings } from "../../../test/helpers/mocks";
import { finish, outputsOf } from "../../../test/helpers/provider";

const CP = fakeKubeconfig("cp");
const SERVICES = [
  {
    name: "postgresql",
    serviceBrokerUrl: "http://broker.example.test",
    backupManagerUrl: "http://backup.example.test",
  },
];
const CREDENTIALS = {
  postgresql: {
    serviceBroker: { username: "admin", password: "broker-password" },
    backupManager: { username: "admin", password: "backup-password" },
  },
};

describe("klutch provider: Crossplane", function () {
  this.timeout(30000);

  it("maps the inputs onto the component: chart, packages, ProviderConfigs, credentials kept secret", async () => {
    const r = mockPulumi({});
    const made = await new KlutchProvider().construct(
      "xp",
      "klutch:crossplane:Crossplane",
      {
        kubeconfig: pulumi.secret(CP),
        anyninesServices: SERVICES,
        anyninesCredentials: pulumi.secret(CREDENTIALS),
        labels: { team: "a" },
      },
      {},
    );
    const { values } = await outputsOf(made.state);
    await finish();
    assert.equal(values.namespace, "crossplane-system");
    // The output names the package objects the component made.
    const packageObjects = r.resources
      .filter((x) => x.type.startsWith("kubernetes:pkg.crossplane.io/"))
      .map((x) => `${x.inputs.kind}/${x.inputs.metadata.name}`);
    assert.equal(packageObjects.length, 6);
    assert.deepEqual([...(values.packages as string[])].sort(), packageObjects.sort());
    const chart = r.ofType("kubernetes:helm.sh/v4:Chart")[0]!;
    assert.equal(chart.inputs.version, "2.4.0");
    assert.deepEqual(chart.inputs.repositoryOpts, { repo: "https://charts.crossplane.io/stable" });
    assert.deepEqual(chart.inputs.values.args, ["--enable-ssa-claims"]);
    const providerConfigs = r.resources.filter((x) => x.type.endsWith(":ProviderConfig"));
    // provider-kubernetes's own, and the service broker's and backup manager's.
    assert.equal(providerConfigs.length, 3, providerConfigs.map((x) => x.type).join(", "));
    const secrets = r.ofType("kubernetes:core/v1:Secret");
    assert.equal(secrets.length, 2);
    for (const s of secrets) assert.ok(isSecretEnvelope(s.inputs.stringData), s.name);
    for (const x of r.resources)
      assert.ok(!plainStrings(x.inputs).some((s) => s.endsWith("-password")), `${x.name} shows a password`);
    for (const x of r.resources.filter((x) => x.type.startsWith("kubernetes:") && x.inputs.metadata))
      assert.equal(x.inputs.metadata.labels?.team, "a", x.name);
  });

  it("a chart and CRDs from folders; no ProviderConfigs when asked not to", async () => {
    const r = mockPulumi({});
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-xp-"));
    await new KlutchProvider().construct(
      "xp",
      "klutch:crossplane:Crossplane",
      {
        kubeconfig: pulumi.secret(CP),
        chartPath: dir,
        crdsPath: dir,
        installProviderConfigs: false,
        anyninesServices: SERVICES,
        skipAwait: true,
      },
      {},
    );
    await finish();
    fs.rmSync(dir, { recursive: true });
    assert.equal(r.ofType("kubernetes:helm.sh/v4:Chart")[0]!.inputs.chart, dir);
    assert.equal(r.ofType("kubernetes:yaml/v2:ConfigGroup").length, 1);
    assert.equal(r.resources.filter((x) => x.type.endsWith(":ProviderConfig")).length, 0);
  });

  it("refuses a Crossplane newer than the toolchain knows, an unpinned package, a missing folder and missing credentials in one message", async () => {
    const r = mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "xp",
        "klutch:crossplane:Crossplane",
        {
          kubeconfig: pulumi.secret(CP),
          version: "2.5.0",
          providerKubernetes: "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:latest",
          crdsPath: "/nonexistent/crds",
          anyninesServices: SERVICES,
          anyninesCredentials: pulumi.secret({
            postgresql: { serviceBroker: CREDENTIALS.postgresql.serviceBroker },
          }),
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^Crossplane xp: invalid arguments:/);
        assert.match(
          err.message,
          /version: must be a Crossplane 2\.0\.x to 2\.4\.x version, or 1\.17\.x to 1\.20\.x .*"2\.5\.0"/,
        );
        assert.match(err.message, /providerKubernetes: must be a pinned package reference/);
        assert.match(err.message, /crdsPath "\/nonexistent\/crds" is not a folder/);
        return true;
      },
    );
    assert.deepEqual(r.resources, []);
    const { problems } = crossplaneProblems({
      anyninesServices: SERVICES,
      anyninesCredentials: { postgresql: { serviceBroker: CREDENTIALS.postgresql.serviceBroker } },
    });
    assert.deepEqual(problems, [
      'anyninesCredentials.postgresql.backupManager is required (username and password of anyninesServices "postgresql")',
    ]);
  });

  it("toolchainChart: the toolchain's chart and CRDs, and what to do when the versions differ", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-xp-"));
    const cluster = path.join(dir, "crossplane-2.4.0", "cluster");
    fs.mkdirSync(path.join(cluster, "charts", "crossplane"), { recursive: true });
    fs.mkdirSync(path.join(cluster, "crds"));
    const ok = crossplaneProblems({ toolchainChart: true }, () => [cluster]);
    assert.deepEqual(ok.problems, []);
    assert.deepEqual(ok.source, {
      chart: { path: path.join(cluster, "charts", "crossplane") },
      crdsPath: path.join(cluster, "crds"),
    });
    const other = crossplaneProblems({ toolchainChart: true, version: "1.19.0" }, () => [cluster]);
    assert.deepEqual(other.problems, [
      "toolchainChart: version is 1.19.0 but the toolchain builds Crossplane 2.4.0; set version to 2.4.0 or change host/toolchain/versions.env",
    ]);
    fs.rmSync(dir, { recursive: true });
  });

  describe("useInstalled: Klutch's packages on the cluster's own core", () => {
    /**
     * A loopback API server answering as kube-apiserver does: the Deployments labelled
     * app=crossplane (the operator's 2.4.0 core in crossplane-system, or `cores`), and 404 for
     * the package kinds, whose CRDs an API-only server lacks (existing-crossplane.ts reads both).
     */
    const apiServer = (cores: object[]) => {
      const server = http.createServer((req, res) => {
        const deployments = req.url?.startsWith("/apis/apps/v1/deployments");
        res.writeHead(deployments ? 200 : 404, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            deployments
              ? { kind: "DeploymentList", apiVersion: "apps/v1", metadata: {}, items: cores }
              : { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 },
          ),
        );
      });
      return new Promise<{ server: http.Server; kubeconfig: string }>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve({ server, kubeconfig: loopbackKubeconfig((server.address() as { port: number }).port) }),
        ),
      );
    };
    const operatorsCore = {
      metadata: { name: "crossplane", namespace: "crossplane-system", labels: { app: "crossplane" } },
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: "crossplane",
                image: "xpkg.crossplane.io/crossplane/crossplane:v2.4.0",
                args: ["core", "start"],
              },
            ],
          },
        },
      },
    };

    it("installs no chart or CRDs; its packages carry its name, which tells its own from someone else's", async () => {
      const api = await apiServer([operatorsCore]);
      try {
        const r = mockPulumi({});
        await new KlutchProvider().construct(
          "xp",
          "klutch:crossplane:Crossplane",
          { kubeconfig: pulumi.secret(api.kubeconfig), useInstalled: true, installProviderConfigs: false },
          {},
        );
        await finish();
        assert.deepEqual(r.ofType("kubernetes:helm.sh/v4:Chart"), []);
        assert.deepEqual(r.ofType("kubernetes:yaml/v2:ConfigGroup"), []);
        const packages = r.resources.filter((x) => x.type.startsWith("kubernetes:pkg.crossplane.io/v1:"));
        assert.ok(packages.length > 0);
        for (const p of packages) assert.equal(p.inputs.metadata.labels[COMPONENT_OWNER_LABEL], "xp", p.name);
      } finally {
        api.server.close();
      }
    });

    it("refuses, before anything is registered, a cluster without a core, and chart settings beside it", async () => {
      const api = await apiServer([]);
      try {
        const r = mockPulumi({});
        await assert.rejects(
          new KlutchProvider().construct(
            "xp",
            "klutch:crossplane:Crossplane",
            { kubeconfig: pulumi.secret(api.kubeconfig), useInstalled: true },
            {},
          ),
          (err: Error) => {
            assert.match(
              err.message,
              /^Crossplane xp: invalid arguments:\n {2}- useInstalled: is true, but the control plane of this component's kubeconfig runs no Crossplane core \(no Deployment labelled app=crossplane in any namespace\): install Crossplane 2\.4\.0 with its chart into crossplane-system, or leave useInstalled out so that this component installs its own$/,
            );
            return true;
          },
        );
        assert.deepEqual(r.resources, []);
      } finally {
        api.server.close();
      }
      assert.deepEqual(
        crossplaneProblems({
          useInstalled: true,
          chartPath: "/charts/crossplane",
          runLocally: true,
        }).problems,
        [
          'chartPath is "/charts/crossplane", but useInstalled puts Klutch\'s packages on the Crossplane the cluster already runs and installs none: leave chartPath out, or useInstalled',
          "runLocally is true, but useInstalled puts Klutch's packages on the Crossplane the cluster already runs and installs none: leave runLocally out, or useInstalled",
        ],
      );
    });
  });
});
