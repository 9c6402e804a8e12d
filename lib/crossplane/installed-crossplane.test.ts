import { strict as assert } from "node:assert";
import type { DeploymentLike } from "./foreign-crossplane";
import {
  foreignPackageIssues,
  installedCrossplaneIssues,
  ssaClaimsOn,
  useInstalledConfigProblems,
} from "./installed-crossplane";
import type { ControlPlaneConfig, CrossplaneConfig } from "../config/schema";

const core = (
  o: { namespace?: string; tag?: string; args?: string[]; owner?: string } = {},
): DeploymentLike => ({
  metadata: {
    name: "crossplane",
    namespace: o.namespace ?? "crossplane-system",
    labels: { app: "crossplane", ...(o.owner ? { "klutch.anynines.com/environment": o.owner } : {}) },
  },
  spec: {
    template: {
      spec: {
        containers: [
          {
            name: "crossplane",
            image: `xpkg.crossplane.io/crossplane/crossplane:${o.tag ?? "v2.4.1"}`,
            ...(o.args ? { args: o.args } : {}),
          },
        ],
      },
    },
  },
});
const input = { environment: "ops", controlPlane: "ops-cp", version: "2.4.0", versionIsDefault: true };
const messages = (cores: DeploymentLike[], o = input) =>
  installedCrossplaneIssues(cores, o).map((i) => `${i.path}: ${i.message}`);

describe("Klutch on the Crossplane an operator installed (crossplane.useInstalled, pure)", () => {
  it("one core in crossplane-system, of the version's minor, SSA claims on: used, nothing refused", () => {
    assert.deepEqual(messages([core()]), [], "a patch apart is the same API");
    assert.deepEqual(messages([core({ args: ["--enable-ssa-claims", "--debug"] })]), []);
    assert.deepEqual(
      messages([core({ tag: "v1.18.2", args: ["--enable-ssa-claims"] })], { ...input, version: "1.18.0" }),
      [],
    );
  });

  it("none, several, an environment's own, another namespace: each refused naming the fix", () => {
    assert.match(
      messages([])[0]!,
      /^klutch:crossplane\.useInstalled: is true, but the control plane ops-cp runs no Crossplane core .*install Crossplane 2\.4\.0 with its chart into crossplane-system/,
    );
    assert.match(
      messages([core(), core({ namespace: "upbound-system" })])[0]!,
      /runs 2 Crossplane cores \(crossplane-system\/crossplane, upbound-system\/crossplane\)/,
    );
    assert.match(
      messages([core({ owner: "ops" })])[0]!,
      /runs this environment's own Crossplane .* which useInstalled would uninstall: leave crossplane\.useInstalled out$/,
    );
    assert.match(messages([core({ owner: "staging" })])[0]!, /runs the Crossplane of environment staging/);
    assert.match(
      messages([core({ namespace: "upbound-system" })])[0]!,
      /runs Crossplane in namespace upbound-system .*install Crossplane there$/,
    );
  });

  it("another minor is refused on crossplane.version, naming the version found; an unsupported one or an image without a version on useInstalled", () => {
    assert.deepEqual(messages([core({ tag: "v2.3.1" })]), [
      "klutch:crossplane.version: is 2.4.0 (the default), but the control plane ops-cp runs Crossplane 2.3.1 (Deployment crossplane-system/crossplane), and the version decides the API shapes Klutch writes: set crossplane.version to 2.3.1",
    ]);
    assert.match(
      messages([core({ tag: "v1.16.0" })])[0]!,
      /^klutch:crossplane\.useInstalled: .*runs Crossplane 1\.16\.0 .*which this project does not run Klutch on/,
    );
    assert.match(
      messages([core({ tag: "latest" })])[0]!,
      /from image xpkg\.crossplane\.io\/crossplane\/crossplane:latest .*whose tag names no version/,
    );
  });

  it("SSA claims off is refused, naming the flag, or the default before 1.19", () => {
    assert.match(
      messages([core({ args: ["--enable-ssa-claims=false"] })])[0]!,
      /with SSA claims off \(Deployment crossplane-system\/crossplane, --enable-ssa-claims=false\)/,
    );
    assert.match(
      messages([core({ tag: "v1.18.2" })], { ...input, version: "1.18.2" })[0]!,
      /with SSA claims off \(.*the default before 1\.19\)/,
    );
  });

  it("reads the flag as core does: the last one counts, Go's boolean words, on by default from 1.19", () => {
    assert.equal(ssaClaimsOn("2.4.0", []), true);
    assert.equal(ssaClaimsOn("1.19.0", []), true);
    assert.equal(ssaClaimsOn("1.17.3", []), false);
    assert.equal(ssaClaimsOn("1.17.3", ["--enable-ssa-claims"]), true);
    assert.equal(ssaClaimsOn("2.4.0", ["--enable-ssa-claims=F"]), false);
    assert.equal(ssaClaimsOn("2.4.0", ["--enable-ssa-claims=false", "--enable-ssa-claims=1"]), true);
    assert.equal(ssaClaimsOn("2.4.0", ["--enable-ssa-claims-other=false"]), true, "another flag");
  });

  it("a package of a name the environment installs, not its own, is refused; its own is not", () => {
    const planned = [
      { kind: "Provider", name: "provider-kubernetes" },
      { kind: "Function", name: "function-patch-and-transform" },
    ];
    const found = [
      { kind: "Provider", name: "provider-kubernetes" },
      {
        kind: "Function",
        name: "function-patch-and-transform",
        labels: { "klutch.anynines.com/environment": "ops" },
      },
      { kind: "Provider", name: "provider-aws" },
    ];
    assert.deepEqual(foreignPackageIssues(found, planned, { environment: "ops", controlPlane: "ops-cp" }), [
      {
        path: "klutch:crossplane.useInstalled",
        message:
          "the control plane ops-cp already has Provider provider-kubernetes, which environment ops did not make, and this environment would install its own of that name: remove it (Klutch's packages come with the environment), or use a control plane without it",
      },
    ]);
  });

  it("the config alone: only on an existing control plane, and with no core of its own to run or install", () => {
    const cp = (infrastructure: string) => ({ name: "ops-cp", infrastructure }) as ControlPlaneConfig;
    const xp = (o: Partial<CrossplaneConfig>) => ({ useInstalled: true, ...o }) as CrossplaneConfig;
    assert.deepEqual(useInstalledConfigProblems(cp("existing"), xp({})), []);
    assert.deepEqual(useInstalledConfigProblems(cp("aws"), xp({ useInstalled: false })), [], "off: nothing");
    const problems = useInstalledConfigProblems(
      cp("aws"),
      xp({ runLocally: true, image: "r.example/crossplane:v2.4.0", chartPath: "./chart" }),
    );
    assert.deepEqual(
      problems.map((p) => p.at.join(".")),
      ["crossplane.useInstalled", "crossplane.runLocally", "crossplane.image", "crossplane.chartPath"],
    );
    assert.match(problems[0]!.message, /is made by this environment \(infrastructure "aws"\)/);
  });
});
