import { strict as assert } from "node:assert";
import { crossplane as crossplaneSchema, type ControlPlaneConfig } from "../config/schema";
import { formatPath } from "../config/messages";
import { planCrossplane, splitImageReference } from "./crossplane-plan";

const NODE_FILE = "/state/control-plane/node/node.json";
const IMAGE = "klutch.local/crossplane:2.4.0-0a1b2c3d4e5f";

function plan(
  controlPlane: Partial<ControlPlaneConfig>,
  crossplane: Record<string, unknown> = {},
  files: Record<string, string> = {},
) {
  const problems: string[] = [];
  const result = planCrossplane(
    {
      controlPlane: {
        value: { name: "control-plane", infrastructure: "local", ...controlPlane },
        at: ["controlPlane"],
      },
      crossplane: crossplaneSchema.parse(crossplane),
      localStateDir: "/state",
      readFile: (f) => {
        if (f in files) return files[f]!;
        throw new Error("ENOENT");
      },
    },
    (at, message) => problems.push(`${formatPath(at)}: ${message}`),
  );
  return { result, problems };
}
const REGISTRY = "172.30.0.5:41234";
const nodeState = (images: Record<string, string>, registry: string | undefined = REGISTRY) =>
  JSON.stringify({
    slot: 1,
    nodeName: "control-plane-node",
    podCidr: "10.244.0.0/24",
    apiServerPort: 1,
    images,
    ...(registry ? { registry } : {}),
  });
/** What `npm run clusters -- up` leaves in the registry's directory (host/local-clusters/packages). */
const PUBLISHED = {
  "/state/.registry/packages.json": JSON.stringify({
    "function-klutch": { repository: "klutch/function-klutch", tag: "v0.1.0-g0a1b2c3d4e5f" },
  }),
  "/state/.registry/pki/ca.crt": "-----BEGIN CERTIFICATE-----\nregistry CA\n",
};

describe("how Crossplane core runs (pure)", () => {
  it("a local control plane without a node: a process by default, the toolchain's chart, no packages", () => {
    const { result, problems } = plan({});
    assert.deepEqual(problems, []);
    assert.deepEqual(result, {
      run: { kind: "process" },
      version: "1.20.11",
      toolchainChart: true,
      packagesPullable: false,
    });
  });

  it("the core's version: v2 where the chart's pods run, 1.20 for a process; v2 as a process is refused", () => {
    assert.equal(plan({ infrastructure: "existing" }).result?.version, "2.4.0");
    assert.equal(plan({ infrastructure: "existing" }, { version: "1.20.11" }).result?.version, "1.20.11");
    assert.equal(plan({}, { version: "1.19.3" }).result?.version, "1.19.3");
    const v2Process = plan({}, { version: "2.4.0" });
    assert.equal(v2Process.result, undefined);
    assert.deepEqual(v2Process.problems, [
      "klutch:crossplane.version: is 2.4.0, but Crossplane core run as a process (crossplane.runLocally) runs only Crossplane 1.x here: v2 removed the Resources-mode compositions such a core uses, and would need the External package runtime with Klutch's function as a process beside it. Set crossplane.version to 1.20.11 (or leave it out), or give the control plane a node so Crossplane runs as the chart's pods",
    ]);
  });

  it("a local control plane with a node: the chart's pods from the node's crossplane image", () => {
    const { result, problems } = plan(
      { nodes: 1 },
      {},
      { [NODE_FILE]: nodeState({ crossplane: IMAGE }), ...PUBLISHED },
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(result, {
      run: {
        kind: "node",
        image: { repository: "klutch.local/crossplane", tag: "2.4.0-0a1b2c3d4e5f" },
        // As the node reaches the registry: its link's host end.
        packages: {
          registry: REGISTRY,
          // This machine pushes on loopback, where the registry listens.
          pushRegistry: "127.0.0.1:41234",
          references: { "function-klutch": `${REGISTRY}/klutch/function-klutch:v0.1.0-g0a1b2c3d4e5f` },
          caBundle: "-----BEGIN CERTIFICATE-----\nregistry CA\n",
        },
        // Slot 1's link is 172.30.0.4/30: the node end, where other nodes reach its NodePorts.
        node: { address: "172.30.0.6", images: { crossplane: IMAGE } },
      },
      version: "2.4.0",
      toolchainChart: true,
      packagesPullable: false,
    });
    // Still a process when asked for one.
    assert.equal(plan({ nodes: 1 }, { runLocally: true }).result?.run.kind, "process");
  });

  it("any other control plane: the published chart and image, packages pulled", () => {
    const { result } = plan({ infrastructure: "existing" });
    assert.deepEqual(result, {
      run: { kind: "cluster" },
      version: "2.4.0",
      toolchainChart: false,
      packagesPullable: true,
    });
  });

  it("an existing control plane with useInstalled: the operator's core, at the version set, packages pulled; refused where no such core can be", () => {
    assert.deepEqual(plan({ infrastructure: "existing" }, { useInstalled: true, version: "2.3.1" }), {
      result: { run: { kind: "installed" }, version: "2.3.1", toolchainChart: false, packagesPullable: true },
      problems: [],
    });
    const refused = plan({ infrastructure: "local", nodes: 1 }, { useInstalled: true, runLocally: true });
    assert.equal(refused.result, undefined);
    assert.deepEqual(
      refused.problems.map((p) => p.split(": ")[0]),
      ["klutch:crossplane.useInstalled", "klutch:crossplane.runLocally"],
    );
  });

  it("takes Klutch's function package only where packages are pulled; a local control plane has its own", () => {
    const ref = "registry.example.com/klutch/function-klutch:v0.1.0";
    assert.deepEqual(plan({ infrastructure: "existing" }, { functionKlutch: ref }).problems, []);
    const local = plan({}, { functionKlutch: ref });
    assert.equal(local.result, undefined);
    assert.deepEqual(local.problems, [
      `klutch:crossplane.functionKlutch: is ${ref}, but the local control plane "control-plane" pulls no packages: its Crossplane installs Klutch's function from the local registry that \`npm run clusters -- up\` fills, so remove crossplane.functionKlutch`,
    ]);
    // Pinned, like every package.
    assert.throws(
      () =>
        plan(
          { infrastructure: "existing" },
          { functionKlutch: "registry.example.com/klutch/function-klutch:latest" },
        ),
      /pinned package reference/,
    );
  });

  it("refuses what cannot run, naming the setting, the value and the fix", () => {
    assert.deepEqual(plan({}, { runLocally: false }).problems, [
      "klutch:crossplane.runLocally: is false, but the local control plane \"control-plane\" has no node (klutch:controlPlane.nodes is 0), so no Crossplane pod can start and no chart repository is reachable: set crossplane.runLocally to true (core as a process, `npm run clusters -- crossplane start`) or klutch:controlPlane.nodes to 1 (the chart's pods, from the node's klutch.local/crossplane image)",
    ]);
    assert.match(
      plan({ nodes: 1 }).problems.join("\n"),
      /^klutch:controlPlane\.nodes: is 1, but the node of "control-plane" has not been started \(no \/state\/control-plane\/node\/node\.json\), so Crossplane has no image to run: start it with `npm run clusters -- up`/,
    );
    assert.match(
      plan(
        { nodes: 1 },
        {},
        { [NODE_FILE]: nodeState({ bridge: "klutch.local/bridge:1-0a1b2c3d4e5f" }) },
      ).problems.join("\n"),
      /holds no crossplane image \(\/state\/control-plane\/node\/node\.json lists bridge\): restart it with `npm run clusters -- up` so that it imports klutch\.local\/crossplane/,
    );
    assert.match(
      plan(
        { nodes: 1 },
        { version: "1.19.3" },
        { [NODE_FILE]: nodeState({ crossplane: IMAGE }) },
      ).problems.join("\n"),
      /^klutch:crossplane\.version: is 1\.19\.3, but the node of "control-plane" holds Crossplane klutch\.local\/crossplane:2\.4\.0-0a1b2c3d4e5f/,
    );
    assert.match(plan({ nodes: 1 }, {}, { [NODE_FILE]: "{" }).problems.join("\n"), /node\.json is not JSON/);
    // A node started before the registry existed, and a registry that has published nothing.
    assert.match(
      plan(
        { nodes: 1 },
        {},
        { [NODE_FILE]: nodeState({ crossplane: IMAGE }, ""), ...PUBLISHED },
      ).problems.join("\n"),
      /^klutch:controlPlane\.nodes: the node of "control-plane" cannot install the project's Crossplane packages \(the node was started without the local package registry\): start it with `npm run clusters -- up`/,
    );
    assert.match(
      plan({ nodes: 1 }, {}, { [NODE_FILE]: nodeState({ crossplane: IMAGE }) }).problems.join("\n"),
      /no packages have been published \(\/state\/\.registry\/packages\.json is missing or not JSON\)/,
    );
  });

  it("splits an image reference at the tag's colon, a registry port included", () => {
    assert.deepEqual(splitImageReference("klutch.local/crossplane:1.20.11-abc"), {
      repository: "klutch.local/crossplane",
      tag: "1.20.11-abc",
    });
    assert.deepEqual(splitImageReference("registry:5000/team/crossplane:v1"), {
      repository: "registry:5000/team/crossplane",
      tag: "v1",
    });
    assert.equal(splitImageReference("klutch.local/crossplane"), undefined);
    assert.equal(splitImageReference("x@sha256:abc"), undefined);
  });
});
