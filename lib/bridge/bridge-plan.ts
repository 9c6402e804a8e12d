import * as path from "node:path";
import type { AddIssue, Located } from "../config/located";
import { formatPath } from "../config/messages";
import type { AppClusterConfig, BridgeConfig, ControlPlaneConfig } from "../config/schema";
import { readNodeImages } from "../local/node-state";
import { awsRoleProblem } from "./aws-role";
import { bridgeDeploymentProblem, type BridgeState } from "./deployment";

/**
 * Whether and how the environment stack deploys the Crossplane bridge (BridgeDeployment on the
 * control plane), from `klutch:bridge` and the control plane it runs on. Pure: the caller
 * passes the file reader (validation and the program read the same node state).
 *
 * - A local control plane with a node (`nodes: 1`) runs it by default, from the images that
 *   node imported (its node.json): the bridge and, for the proxies, HAProxy, with
 *   `imagePullPolicy: Never` since nothing can be pulled here; its state in a hostPath
 *   directory of the cluster's (the one node runs every replica).
 * - A local control plane without a node cannot run a pod: `deploy: true` is refused there
 *   (the bridge runs as a process instead, `npm run bridge`).
 * - Any other control plane runs it when `deploy: true`, from the published image (or
 *   `image`), with its state in a backend every replica reaches (`state`, required there).
 */

/**
 * Where this project's bridge image is published for non-local clusters, at this package's
 * version (a unit test keeps the tag equal to package.json's version). Set `klutch:bridge.image`
 * to use a copy in your own registry.
 */
export const PUBLISHED_BRIDGE_IMAGE = "ghcr.io/klutch-pulumi/bridge:0.1.0";

/** The ops server's port in the pod (BridgeDeployment's default). */
const OPS_PORT = 9464;

export interface BridgePlan {
  image: string;
  imagePullPolicy: "Never" | "IfNotPresent";
  replicas: number;
  state: BridgeState;
  /** Further bridge flags: the proxies' image on a local node. */
  flags: string[];
  /** The IAM role its pods assume for S3 state (bridge.awsRoleArn, lib/bridge/aws-role.ts). */
  awsRoleArn?: string;
}

export interface BridgePlanInput {
  controlPlane: Located<ControlPlaneConfig>;
  appClusters: Located<AppClusterConfig>[];
  bridge: BridgeConfig;
  /** The local clusters' directory, absolute (klutch:localClusters.stateDir resolved). */
  localStateDir: string;
  readFile: (file: string) => string;
}

/**
 * The bridge Deployment the config asks for, or undefined when none is (or when the config is
 * wrong: each problem goes to `add`, naming the setting, the value and the fix).
 */
export function planBridge(input: BridgePlanInput, add: AddIssue): BridgePlan | undefined {
  const { bridge } = input;
  const cp = input.controlPlane.value;
  const cpAt = input.controlPlane.at;
  const local = cp.infrastructure === "local";
  const hasNode = local && (cp.nodes ?? 0) > 0;
  const deploy = bridge.deploy ?? hasNode;
  const role = bridge.awsRoleArn;
  const roleProblem = role
    ? awsRoleProblem(role, { deployed: deploy, local, state: bridge.state })
    : undefined;
  if (roleProblem) add(["bridge", "awsRoleArn"], roleProblem);
  if (!deploy || roleProblem) return undefined;
  let problems = 0;
  const problem = (at: (string | number)[], message: string) => {
    problems++;
    add(at, message);
  };

  if (local && !hasNode) {
    problem(
      ["bridge", "deploy"],
      `true needs a node on the local control plane (${formatPath([...cpAt, "nodes"])} is ${cp.nodes ?? 0}, so no pod can start): set klutch:controlPlane.nodes to 1, or remove bridge.deploy and run the bridge as a process with \`npm run bridge\``,
    );
    return undefined;
  }

  let plan: BridgePlan | undefined;
  if (hasNode) plan = localPlan(input, problem);
  else {
    if (!bridge.state) {
      problem(
        ["bridge", "state"],
        `is required to deploy the bridge on infrastructure "${cp.infrastructure}": every replica must reach the groups' Pulumi state; set bridge.state to {kind: backend, url: s3://bucket/prefix} (or gs://, azblob://, https://)`,
      );
    } else if (bridge.state.kind === "hostPath") {
      problem(
        ["bridge", "state", "kind"],
        `"hostPath" is only for a one-node local cluster: on infrastructure "${cp.infrastructure}" each node would have its own directory and a standby taking over would not see the leader's stacks; use {kind: backend, url: s3://…}`,
      );
    } else {
      plan = {
        image: bridge.image ?? PUBLISHED_BRIDGE_IMAGE,
        imagePullPolicy: "IfNotPresent",
        replicas: bridge.replicas,
        state: bridge.state,
        flags: bridge.proxyImage ? ["--proxy-image", bridge.proxyImage] : [],
        ...(role ? { awsRoleArn: role } : {}),
      };
    }
  }
  if (!plan) return undefined;

  const bad = bridgeDeploymentProblem({
    replicas: plan.replicas,
    opsPort: OPS_PORT,
    state: plan.state,
    flags: plan.flags,
  });
  if (bad) problem(["bridge", ...bad.field.split(".")], bad.message);
  return problems > 0 ? undefined : plan;
}

/** On a local control plane with a node: the node's own images, state on the node. */
function localPlan(input: BridgePlanInput, problem: AddIssue): BridgePlan | undefined {
  const { bridge } = input;
  const cp = input.controlPlane.value;
  const clusterDir = path.join(input.localStateDir, cp.name);
  const start = "start it with `npm run clusters -- up` (it reads the stack's `nodes`), then run again";
  const read = readNodeImages(clusterDir, input.readFile);
  if (!read.ok) {
    problem(
      [...input.controlPlane.at, "nodes"],
      read.missing
        ? `is ${cp.nodes}, but the node of "${cp.name}" has not been started (${read.problem}), so the bridge has no image to run: ${start}`
        : `${read.problem}: ${start}`,
    );
    return undefined;
  }
  const { images, file } = read;
  const held = Object.values(images);
  // A local node pulls nothing (no registry): only what it imported can run.
  const pick = (field: "image" | "proxyImage", name: string): string | undefined => {
    const own = images[name];
    const chosen = bridge[field] ?? own;
    if (!chosen) {
      problem(
        [...input.controlPlane.at, "nodes"],
        `the node of "${cp.name}" holds no ${name} image (${file} lists ${Object.keys(images).join(", ") || "none"}): restart it with \`npm run clusters -- up\` so that it imports klutch.local/${name}`,
      );
      return undefined;
    }
    if (!held.includes(chosen)) {
      problem(
        ["bridge", field],
        `"${chosen}" is not an image the node of "${cp.name}" holds, and a local node pulls nothing (${file} lists ${held.join(", ")}): remove bridge.${field} to use ${own ?? `its ${name} image`}`,
      );
      return undefined;
    }
    return chosen;
  };
  const image = pick("image", "bridge");
  const proxyImage = pick("proxyImage", "haproxy");
  checkLoadBalancers(input.appClusters, cp.name, problem);
  if (!image || !proxyImage) return undefined;
  return {
    image,
    imagePullPolicy: "Never",
    replicas: bridge.replicas,
    state: bridge.state ?? { kind: "hostPath", path: path.join(clusterDir, "bridge-state") },
    flags: ["--proxy-image", proxyImage],
  };
}

/**
 * A LoadBalancer Service never gets an address on a local cluster (no load-balancer
 * controller), and the bridge waits for its proxies there like on any cluster.
 */
function checkLoadBalancers(apps: Located<AppClusterConfig>[], cpName: string, problem: AddIssue): void {
  for (const app of apps) {
    const c = app.value.networkConnector;
    if (c.implementation !== "proxy" || c.serviceType !== "LoadBalancer") continue;
    problem(
      [...app.at, "networkConnector", "serviceType"],
      `"LoadBalancer" (the default when unset) never gets an address on the local cluster "${cpName}", which has no load-balancer controller, so the bridge's proxy for ${app.value.name} would never be Ready: set networkConnector.serviceType to NodePort (or ClusterIP)`,
    );
  }
}
