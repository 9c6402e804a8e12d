import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { crossplaneProblems } from "./crossplane";
import { KlutchProvider } from "../provider";
import { fakeKubeconfig } from "../../../test/helpers/kubeconfig";
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
});
