import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { LocalClusters } from "../../host/local-clusters";
import { localCrossplaneSource } from "../../host/automation/local-crossplane-source";
import { toolchainCrossplaneClusterDirs } from "../../host/automation/toolchain";
import { Crossplane } from "../../components/crossplane/crossplane";
import { crossplane as crossplaneSchema, type EnvironmentConfig } from "../../lib/config/schema";
import { environmentLabels } from "../../lib/environment-plan";
import { existingCrossplaneCheck } from "../../programs/stack/existing-crossplane";
import { existingNamespacesCheck } from "../../programs/stack/existing-namespaces";
import { environmentSchema } from "../../components/config/schema";
import { clusterSnapshot, snapshotDiff } from "../helpers/cluster-snapshot";
import { inlineStack, upOrExplain } from "../helpers/inline-stack";
import { kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";
import { YamlProgram } from "../helpers/yaml-program";
import { crossplaneDeployment, installCrossplaneCrds } from "../helpers/foreign-crossplane";
import { installBindCrds } from "../helpers/bind-crds";
import { bindCrds } from "../../lib/bind/crds";
import { DEFAULT_BIND_RELEASE } from "../../lib/bind/upstream/release";
import { installedCoreProblems } from "../../programs/klutch-provider/construct/crossplane";
import { COMPONENT_OWNER_LABEL } from "../../lib/crossplane/installed-crossplane";

const CLUSTER = "existing-cp";

/** What the check reads of a config: an existing control plane of environment `ops`. */
const config = (kubeconfig: string, crossplane?: Record<string, unknown>) =>
  ({
    environment: "ops",
    controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kubeconfig } },
    appClusters: [],
    ...(crossplane ? { crossplane: crossplaneSchema.parse(crossplane) } : {}),
  }) as unknown as EnvironmentConfig;

/**
 * A control plane handed over by kubeconfig, as an operator's is, on a real kube-apiserver (an
 * API-only local cluster: no node runs the Deployments, which the check only reads): a Crossplane
 * someone else installed is refused naming its version, Deployment and owner; the environment's
 * own is not; the check changes nothing on the cluster.
 */
describe("a Crossplane already on an existing control plane, asked of a real API server (e2e)", function () {
  this.timeout(5 * 60_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-existing-cp-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const check = () =>
    existingCrossplaneCheck(
      { config: config(kc()), kubeconfig: fs.readFileSync(kc(), "utf8"), preview: false },
      "2.4.0",
    );
  const apply = (doc: string) => {
    const r = kubectlApply(kc(), doc);
    assert.equal(r.status, 0, r.stderr);
  };

  before(async () => {
    await clusters.up([CLUSTER]);
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("a control plane without Crossplane: nothing refused, nothing said", async () => {
    assert.deepEqual(await check(), { issues: [], notes: [] });
  });

  it("a Crossplane someone else installed, in any namespace, is refused on the kubeconfig's field, naming version, Deployment and the fix; the cluster is left as it was", async () => {
    kubectl(kc(), ["create", "namespace", "upbound-system"]);
    apply(crossplaneDeployment("upbound-system", "v2.3.0"));
    const before = kubectlJson<{ metadata: { resourceVersion: string } }>(kc(), [
      "-n",
      "upbound-system",
      "get",
      "deployment",
      "crossplane",
    ]).metadata.resourceVersion;
    const answers = await check();
    assert.deepEqual(answers.notes, []);
    assert.deepEqual(
      answers.issues.map((i) => i.path),
      ["klutch:controlPlane.kubeconfig"],
    );
    assert.match(
      answers.issues[0]!.message,
      /^the control plane ops-cp already runs Crossplane 2\.3\.0 as Deployment upbound-system\/crossplane, which environment ops did not install \(it has no label klutch\.anynines\.com\/environment=ops\); this environment installs Crossplane 2\.4\.0 itself/,
    );
    assert.equal(
      kubectlJson<{ metadata: { resourceVersion: string } }>(kc(), [
        "-n",
        "upbound-system",
        "get",
        "deployment",
        "crossplane",
      ]).metadata.resourceVersion,
      before,
      "read only",
    );
    kubectl(kc(), ["delete", "namespace", "upbound-system", "--wait=true"]);
  });

  it("the environment's own Crossplane (its label, as the chart's customLabels put it) is not refused; another environment's is", async () => {
    kubectl(kc(), ["create", "namespace", "crossplane-system"]);
    apply(crossplaneDeployment("crossplane-system", "v2.4.0", { "klutch.anynines.com/environment": "ops" }));
    assert.deepEqual(await check(), { issues: [], notes: [] });
    apply(
      crossplaneDeployment("crossplane-system", "v2.4.0", { "klutch.anynines.com/environment": "staging" }),
    );
    const [issue] = (await check()).issues;
    assert.match(
      issue!.message,
      /Crossplane 2\.4\.0 as Deployment crossplane-system\/crossplane.*\(it belongs to environment staging\)/,
    );
  });

  it("a server that cannot be asked refuses nothing and says so", async () => {
    const unreachable = fs
      .readFileSync(kc(), "utf8")
      .replace(/server: https:\/\/[^\s]+/, "server: https://127.0.0.1:1");
    const answers = await existingCrossplaneCheck(
      { config: config(kc()), kubeconfig: unreachable, preview: false },
      "2.4.0",
    );
    assert.deepEqual(answers.issues, []);
    assert.match(
      answers.notes[0] ?? "",
      /^could not ask the control plane ops-cp whether it runs a Crossplane already/,
    );
  });
  describe("crossplane.useInstalled: Klutch on the operator's own core", () => {
    const useInstalled = (crossplane: Record<string, unknown> = {}) =>
      existingCrossplaneCheck(
        {
          config: config(kc(), { useInstalled: true, ...crossplane }),
          kubeconfig: fs.readFileSync(kc(), "utf8"),
          preview: false,
        },
        (crossplane.version as string | undefined) ?? "2.4.0",
      ).then((a) => a.issues.map((i) => `${i.path}: ${i.message}`));
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-installed-xp-"));
    after(() => fs.rmSync(work, { recursive: true, force: true }));

    before(() => {
      kubectl(kc(), ["delete", "namespace", "crossplane-system", "--ignore-not-found", "--wait=true"]);
    });

    it("no core: refused, naming the install; the operator's core as upstream installs it (2.4, crossplane-system, SSA claims on by default): used", async () => {
      assert.match(
        (await useInstalled())[0] ?? "",
        /^klutch:crossplane\.useInstalled: is true, but the control plane ops-cp runs no Crossplane core/,
      );
      // The operator's install: Crossplane's own CRDs (the toolchain's 2.4.0) and its core's Deployment.
      const crds = localCrossplaneSource(toolchainCrossplaneClusterDirs(), "2.4.0").crdsPath;
      kubectl(kc(), ["apply", "--server-side", "-f", crds]);
      kubectl(kc(), ["create", "namespace", "crossplane-system"]);
      apply(crossplaneDeployment("crossplane-system", "v2.4.0", {}, ["core", "start"]));
      assert.deepEqual(await useInstalled(), []);
    });

    it("another minor, SSA claims off, or a package of Klutch's names the operator made: refused before anything is made, each naming its fix", async () => {
      assert.deepEqual(await useInstalled({ version: "2.3.0" }), [
        "klutch:crossplane.version: is 2.3.0, but the control plane ops-cp runs Crossplane 2.4.0 (Deployment crossplane-system/crossplane), and the version decides the API shapes Klutch writes: set crossplane.version to 2.4.0",
      ]);
      apply(
        crossplaneDeployment("crossplane-system", "v2.4.0", {}, [
          "core",
          "start",
          "--enable-ssa-claims=false",
        ]),
      );
      assert.match(
        (await useInstalled())[0] ?? "",
        /with SSA claims off \(Deployment crossplane-system\/crossplane, --enable-ssa-claims=false\)/,
      );
      apply(crossplaneDeployment("crossplane-system", "v2.4.0", {}, ["core", "start"]));
      const provider = {
        apiVersion: "pkg.crossplane.io/v1",
        kind: "Provider",
        metadata: { name: "provider-kubernetes" },
      };
      apply(
        JSON.stringify({
          ...provider,
          spec: { package: "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.0" },
        }),
      );
      assert.match(
        (await useInstalled())[0] ?? "",
        /already has Provider provider-kubernetes, which environment ops did not make/,
      );
      kubectl(kc(), ["delete", "provider", "provider-kubernetes", "--wait=true"]);
      assert.deepEqual(await useInstalled(), []);
    });

    it("the provider's Crossplane component asks the same of its cluster (its useInstalled), naming its own inputs, and tells its own packages by its name", async () => {
      const packages = crossplaneSchema.parse({});
      const ask = (namespace = "crossplane-system", version?: string) =>
        installedCoreProblems(
          "xp",
          { useInstalled: true, kubeconfig: fs.readFileSync(kc(), "utf8"), ...(version ? { version } : {}) },
          { version: version ?? "2.4.0", namespace, packages },
        );
      assert.deepEqual(await ask(), []);
      const cluster = "the control plane of this component's kubeconfig";
      assert.deepEqual(await ask("klutch-xp"), [
        `useInstalled: is true, but ${cluster} runs Crossplane in namespace crossplane-system (Deployment crossplane-system/crossplane), but this component places provider-kubernetes' identity and the ProviderConfigs' Secrets in klutch-xp: install Crossplane there`,
      ]);
      assert.deepEqual(await ask("crossplane-system", "2.3.0"), [
        `version: is 2.3.0, but ${cluster} runs Crossplane 2.4.0 (Deployment crossplane-system/crossplane), and the version decides the API shapes Klutch writes: set version to 2.4.0`,
      ]);
      const provider = (owner: string) =>
        JSON.stringify({
          apiVersion: "pkg.crossplane.io/v1",
          kind: "Provider",
          metadata: { name: "provider-kubernetes", labels: { [COMPONENT_OWNER_LABEL]: owner } },
          spec: { package: "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.0" },
        });
      apply(provider("someone-else"));
      assert.deepEqual(await ask(), [
        `useInstalled: ${cluster} already has Provider provider-kubernetes, which the Crossplane component xp did not make, and it would install its own of that name: remove it (Klutch's packages come with the component), or use a control plane without it`,
      ]);
      // Its own, from an earlier up: not refused.
      apply(provider("xp"));
      assert.deepEqual(await ask(), []);
      kubectl(kc(), ["delete", "provider", "provider-kubernetes", "--wait=true"]);
    });

    it("up installs Klutch's packages on it and no core; destroy leaves every object the cluster had, at its resourceVersion", async () => {
      const kubeconfig = fs.readFileSync(kc(), "utf8");
      const labels = environmentLabels("ops");
      const stack = await inlineStack({
        projectName: "installed-crossplane",
        stackName: "e2e",
        workDir: work,
        passphrase: "installed-crossplane-e2e",
        program: () => {
          const provider = new k8s.Provider("ops-cp", { kubeconfig, suppressHelmHookWarnings: true });
          new Crossplane("ops-crossplane", {
            provider,
            namespace: "crossplane-system",
            version: "2.4.0",
            // Never read on the operator's core (no chart is installed): a folder that is not there.
            chart: { path: path.join(work, "no-chart") },
            packages: crossplaneSchema.parse({}),
            anyninesServices: [],
            installProviderConfigs: false,
            // No core runs on this API-only cluster, so no package turns Healthy.
            skipAwait: true,
            useInstalled: true,
            kubeconfig,
            labels,
          });
          return Promise.resolve({});
        },
      });
      const before = clusterSnapshot(kc());
      await upOrExplain(stack);
      const made = snapshotDiff(before, clusterSnapshot(kc()));
      assert.deepEqual(
        made.filter((l) => !l.startsWith("made: ")),
        [],
        "up changed or deleted nothing of the operator's: not its core, its CRDs or its namespace",
      );
      const kinds = made.map((l) => l.replace(/^made: \S+ (\S+) \/?(.*)$/, "$1 $2")).sort();
      assert.deepEqual(kinds, [
        "ClusterRole klutch:provider-kubernetes",
        "ClusterRoleBinding klutch:provider-kubernetes",
        "Configuration anynines-dataservices",
        "DeploymentRuntimeConfig provider-anynines",
        "DeploymentRuntimeConfig provider-kubernetes",
        "Function function-patch-and-transform",
        "Provider provider-anynines",
        "Provider provider-kubernetes",
      ]);
      await stack.destroy();
      assert.deepEqual(snapshotDiff(before, clusterSnapshot(kc())), [], "the cluster as it was before up");
    });
  });
  describe("namespaces the environment makes, on clusters it did not make", () => {
    const whole = (crossplane: Record<string, unknown> = {}) =>
      environmentSchema.parse({
        environment: "ops",
        controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kc() } },
        appClusters: [{ name: "shop", infrastructure: "existing", kubeconfig: { path: kc() } }],
        crossplane,
      });
    const refused = async (crossplane: Record<string, unknown> = {}) =>
      (await existingNamespacesCheck(whole(crossplane), "/")).issues.map(
        (i) => `${i.path} ${/namespace (\S+),/.exec(i.message)?.[1]}`,
      );

    it("one that is there and not the environment's own is refused on its cluster's kubeconfig, one get each; its own passes", async () => {
      // crossplane-system is the operator's here (the cases above installed a core in it).
      assert.deepEqual(await refused(), ["klutch:controlPlane.kubeconfig crossplane-system"]);
      assert.deepEqual(
        await refused({ useInstalled: true }),
        [],
        "the operator's Crossplane's namespace is used, not made",
      );
      kubectl(kc(), ["create", "namespace", "klutch-bind"]);
      kubectl(kc(), ["create", "namespace", "bind"]);
      kubectl(kc(), ["label", "namespace", "bind", "klutch.anynines.com/environment=ops"]);
      assert.deepEqual(await refused({ useInstalled: true }), [
        "klutch:appClusters[0].kubeconfig klutch-bind",
      ]);
      kubectl(kc(), ["delete", "namespace", "klutch-bind", "bind", "--wait=true"]);
    });
  });

  describe("the provider's Environment asks the same, through the real engine (examples/environment/yaml)", () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-environment-yaml-"));
    const program = new YamlProgram(path.join("environment", "yaml"), work);
    before(async () => {
      program.prepare();
      program.config("controlPlaneKubeconfig", kc());
      program.config("appClusterKubeconfig", kc());
      // The operator's install (the example uses it): Crossplane's CRDs, its namespace.
      await installCrossplaneCrds(kc());
      apply(JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "crossplane-system" } }));
    });
    after(() => {
      program.cleanUp();
      fs.rmSync(work, { recursive: true, force: true });
    });
    const registered = () =>
      program.resources().filter((urn) => !/::pulumi:(pulumi:Stack|providers:)/.test(urn));

    it("`preview`, then `up`, onto a control plane whose Crossplane is of another minor: each refused before anything is registered, naming it and the fix", () => {
      apply(crossplaneDeployment("crossplane-system", "v2.3.0", {}, ["core", "start"]));
      // The preview an operator runs first already says what the update would meet.
      for (const command of [["preview"], ["up", "--yes", "--skip-preview"]]) {
        const r = program.run(command);
        assert.notEqual(r.status, 0, r.out);
        assert.match(
          r.out,
          /Environment klutch: invalid arguments:\s+- crossplane\.version: is 2\.4\.0 \(the default\), but the control plane ops-cp runs Crossplane 2\.3\.0 \(Deployment crossplane-system\/crossplane\), and the version decides the API shapes Klutch writes: set crossplane\.version to 2\.3\.0/,
        );
      }
      assert.deepEqual(registered(), [], "nothing registered");
    });

    it("klutch-bind's CRDs someone else installed on the control plane: `preview` refused, each named with what destroy would do; the environment's own (its label) are not", async () => {
      apply(crossplaneDeployment("crossplane-system", "v2.4.0", {}, ["core", "start"]));
      await installBindCrds(kc(), "30s");
      const r = program.run(["preview"]);
      assert.notEqual(r.status, 0, r.out);
      const names = bindCrds(DEFAULT_BIND_RELEASE).map((c) => c.metadata.name);
      for (const name of names)
        assert.match(
          r.out,
          new RegExp(
            `- controlPlane\\.kubeconfig: the control plane ops-cp already has CustomResourceDefinition ${name.replace(/\./g, "\\.")}, which environment ops did not make \\(it has no label klutch\\.anynines\\.com/environment=ops\\); the environment defines that API itself, and would take the definition over and, on destroy, delete it with every object of its kind`,
          ),
        );
      assert.deepEqual(registered(), []);
      // As an earlier `up` of this environment leaves them.
      kubectl(kc(), ["label", "crd", ...names, "klutch.anynines.com/environment=ops"]);
    });

    it("`preview` onto the operator's 2.4 core plans the whole environment and no Crossplane of its own; nothing is made", () => {
      const out = program.ok(["preview"]);
      assert.match(out, /klutch:crossplane:Crossplane klutch-crossplane create/);
      assert.match(
        out,
        /kubernetes:pkg\.crossplane\.io\/v1:Provider klutch-crossplane-provider-provider-kubernetes create/,
      );
      assert.match(out, /klutch:bind:AppClusterBinding klutch-shop-binding create/);
      assert.doesNotMatch(out, /helm\.sh/, "no Crossplane chart");
      assert.match(out, /\+ \d+ to create/);
      assert.deepEqual(registered(), []);
    });
  });
});
