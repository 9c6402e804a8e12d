import { CROSSPLANE_LEGACY_VERSION } from "../../lib/config/crossplane-versions";
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { IMPLEMENTATION_NAMES as CONNECTOR_IMPLEMENTATIONS } from "../../network/registry";
import { localCrossplaneSource } from "../../host/automation/local-crossplane-source";
import { LocalClusters } from "../../host/local-clusters";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import {
  NOOP_IMPLEMENTATION,
  compositionName,
  noopComposition,
  pulumiBackedComposition,
  renderPipeline,
  renderResourcesMode,
  type CompositionModel,
} from "../../lib/connector-api/compositions";
import { CONNECTOR_GROUP, CONNECTOR_VERSION, XR_KIND } from "../../lib/connector-api/names";
import { connectorXrd } from "../../lib/connector-api/xrd";
import { networkPathCrd } from "../../lib/connector-api/network-path-crd";
import { toolchainEnv } from "../../host/automation/toolchain";
import { convertToPipeline, render } from "../helpers/crossplane-cli";
import { eventually, kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";

const LABELS = { "klutch.anynines.com/environment": "composition-render" };

/** The compositions of the Pulumi-backed implementations (every one but NOOP, which has its own). */
const pulumiBacked: CompositionModel[] = CONNECTOR_IMPLEMENTATIONS.filter(
  (i) => i !== NOOP_IMPLEMENTATION,
).map((i) => pulumiBackedComposition(i));

/** Objects parsed from the CLI's YAML and the API server's JSON. */
type Json = any;

/**
 * The production (Pipeline) form of every composition against the real `crossplane` CLI of
 * the toolchain's Crossplane (1.20.11).
 *
 * What this cannot do yet: run function-patch-and-transform. The module proxy refuses its Go
 * module at every version tried (v0.7.0 to v0.10.8, November 2026: `.info` answers for v0.9.0
 * and v0.8.2, but `.mod` and `.zip` are 403; v0.9.2 is refused outright), so there is no
 * function binary to serve render's Development runtime. What it does instead, with upstream's
 * own code:
 * - `crossplane beta convert pipeline-composition` is Crossplane's migration of a
 *   Resources-mode composition to the function-patch-and-transform pipeline; the Pipeline
 *   form this project deploys must be exactly what it makes of the Resources form that local
 *   Crossplane core composes with (below, and in local-stack.test.ts);
 * - `crossplane render` refuses the Resources form, so the local form's composed resources can
 *   only come from Crossplane core itself, not from render.
 */
describe("production composition form against the crossplane CLI (e2e)", function () {
  this.timeout(5 * 60_000);

  for (const model of [noopComposition(), ...pulumiBacked]) {
    it(`${model.name}: Crossplane's conversion of the Resources form is exactly the Pipeline form`, () => {
      const converted = convertToPipeline(renderResourcesMode(model, LABELS));
      assert.deepEqual(converted, renderPipeline(model, LABELS));
    });

    it(`${model.name}: the Pipeline form gives function-patch-and-transform at least one resource`, () => {
      // The function answers an input without resources or environment patches with a fatal
      // result, "resources or environment patches are required" (ValidateResources in its
      // validate.go, every release from v0.2.0 to v0.10.8, checked in RunFunction before it
      // composes), and Crossplane fails the XR on it: every XR of such a composition would fail
      // on a real cluster. NOOP's Pipeline form once was exactly that.
      const input: Json = renderPipeline(model, LABELS).spec.pipeline[0]!.input;
      assert.ok(input.resources.length > 0 || input.environment?.patches?.length > 0, JSON.stringify(input));
    });
  }

  it("`crossplane render` refuses the Resources form: the local form's output comes from Crossplane core", () => {
    const xr = {
      apiVersion: "klutch.anynines.com/v1",
      kind: "XTCPConnection",
      metadata: { name: "sample" },
      spec: { instanceHost: "pg.example.internal", port: 5432 },
    };
    const r = render(xr, renderResourcesMode(pulumiBacked[0]!, LABELS), []);
    assert.notEqual(r.status, 0, r.stdout);
    // cmd/crank/render/cmd.go (v1.20.11) checks spec.mode before it loads any function.
    assert.match(
      r.stderr,
      /render only supports Composition Function pipelines: .* must use spec\.mode: Pipeline/,
    );
  });
});

/** The same XR in two shapes: every optional field set, and none. */
const ENHANCEMENTS = [
  { InstanceType: "PostgreSQL" },
  { ConnectionType: "wireguardVPN", vpnEndpoint: "vpn.example.com:51820", clientIP: "100.96.0.5" },
  { ConnectionType: "istioMesh", meshID: "mesh1" },
  { ConnectionType: "awsVPCPeering", instanceVPC: "vpc-0abc", appClusterVPC: "vpc-0def" },
];

interface Sample {
  xr: Json;
  /** The NetworkPath the composition must compose for it, spec only. */
  expected: { name: string; spec: Record<string, unknown> };
}

function samples(model: CompositionModel): Sample[] {
  const implementation = model.implementation;
  const resource = model.resources[0]?.name ?? "noop-marker";
  const xr = (name: string, labels: Record<string, string>, spec: Record<string, unknown>) => ({
    apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`,
    kind: XR_KIND,
    metadata: { name, labels },
    spec: { ...spec, compositionRef: { name: model.name } },
  });
  const short = implementation.toLowerCase();
  return [
    {
      // As a claim's XR: Crossplane labels it with the claim's namespace.
      xr: xr(
        `${short}-full`,
        { "crossplane.io/claim-namespace": "team-a" },
        {
          instanceHost: "pg.example.internal",
          port: 5432,
          enhancements: ENHANCEMENTS,
        },
      ),
      expected: {
        name: resource,
        spec: {
          implementation,
          connection: `${short}-full`,
          consumerNamespace: "team-a",
          instanceHost: "pg.example.internal",
          port: 5432,
          enhancements: ENHANCEMENTS,
        },
      },
    },
    {
      // An XR made directly (no claim), without enhancements: the optional patches set nothing.
      xr: xr(`${short}-minimal`, {}, { instanceHost: "10.0.0.7", port: 1 }),
      expected: {
        name: resource,
        spec: { implementation, connection: `${short}-minimal`, instanceHost: "10.0.0.7", port: 1 },
      },
    },
  ];
}

/**
 * What the local form composes, from Crossplane core 1.20.11 itself on a local API server: for
 * every composition and sample XRs with and without the optional fields, the composed
 * NetworkPath and, for Pulumi-backed implementations, the result copied back into the XR.
 * With the Pipeline form shown above to be upstream's conversion of this form, these are the
 * resources a cluster running function-patch-and-transform is meant to compose.
 */
describe("local composition form composed by Crossplane core (e2e)", function () {
  this.timeout(5 * 60_000);

  const CLUSTER = "composition-render";
  const env = toolchainEnv();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-composition-render-"));
  const clusters = new LocalClusters(work);
  let crossplane: LocalCrossplane | undefined;
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const models = [noopComposition(), ...pulumiBacked];

  before(async () => {
    await clusters.up([CLUSTER]);
    const source = localCrossplaneSource(
      [env.KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR],
      CROSSPLANE_LEGACY_VERSION,
    );
    kubectl(kc(), ["apply", "--server-side", "-f", source.crdsPath]);
    kubectl(kc(), ["wait", "--for=condition=Established", "crd", "--all", "--timeout=120s"]);
    const manifests = [
      connectorXrd(compositionName("proxy")),
      networkPathCrd(),
      ...models.map((m) => renderResourcesMode(m, LABELS)),
    ];
    for (const m of manifests) {
      const r = kubectlApply(kc(), JSON.stringify(m));
      assert.equal(r.status, 0, r.stderr);
    }
    crossplane = new LocalCrossplane(work, CLUSTER, env);
    await crossplane.start();
    await eventually(
      "the XRD to be established",
      () =>
        kubectlJson(kc(), ["get", "xrd", `xtcpconnections.${CONNECTOR_GROUP}`]).status?.conditions?.some(
          (c: Json) => c.type === "Established" && c.status === "True",
        ) === true,
      90_000,
    );
  });

  after(async () => {
    let leftovers: number[];
    try {
      await crossplane?.stop();
      await clusters.down();
      leftovers = clusters.leftoverProcesses();
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    assert.deepEqual(leftovers, [], "local cluster or Crossplane processes left behind");
  });

  const composedFor = (xr: string): Json[] =>
    kubectlJson(kc(), ["get", "networkpaths", "-l", `crossplane.io/composite=${xr}`]).items;

  for (const model of models) {
    it(`${model.name}: composes exactly the expected NetworkPath for each sample XR`, async () => {
      const cases = samples(model);
      for (const { xr } of cases) {
        const r = kubectlApply(kc(), JSON.stringify(xr));
        assert.equal(r.status, 0, r.stderr);
      }
      for (const { xr, expected } of cases) {
        await eventually(
          `${xr.metadata.name} to be composed`,
          () => composedFor(xr.metadata.name).length > 0,
          90_000,
        );
        const composed = composedFor(xr.metadata.name);
        assert.equal(composed.length, 1, `${xr.metadata.name} composed ${composed.length} resources`);
        const np = composed[0];
        assert.equal(np.metadata.annotations?.["crossplane.io/composition-resource-name"], expected.name);
        assert.deepEqual(np.spec, expected.spec, xr.metadata.name);
      }
    });
  }

  for (const model of pulumiBacked) {
    it(`${model.name}: copies the NetworkPath's result into the XR and waits for Ready`, async () => {
      const name = `${model.implementation.toLowerCase()}-full`;
      const np = composedFor(name)[0];
      assert.ok(np, `no NetworkPath for ${name}`);
      const xrReady = () =>
        kubectlJson(kc(), ["get", "xtcpconnections", name]).status?.conditions?.find(
          (c: Json) => c.type === "Ready",
        )?.status;
      // Not ready before the bridge (here: this test) reports the path Ready.
      assert.notEqual(xrReady(), "True");
      kubectl(kc(), [
        "patch",
        "networkpath",
        np.metadata.name,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            hostForConsumer: "consumer.example.internal",
            port: 40001,
            conditions: [
              {
                type: "Ready",
                status: "True",
                reason: "ConnectivityEstablished",
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        }),
      ]);
      await eventually(`${name} to be Ready`, () => xrReady() === "True", 90_000);
      const status = kubectlJson(kc(), ["get", "xtcpconnections", name]).status;
      assert.deepEqual([status.hostForConsumer, status.port], ["consumer.example.internal", 40001]);
    });
  }
});
