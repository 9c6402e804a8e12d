import * as path from "node:path";
import type { AddIssue, Located } from "../config/located";
import { crossplaneVersionProblem, defaultCrossplaneVersion } from "../config/crossplane-versions";
import { formatPath } from "../config/messages";
import type { ControlPlaneConfig, CrossplaneConfig } from "../config/schema";
import { readNodeImages } from "../local/node-state";
import { readLocalPackages, type LocalPackages } from "../local/packages";
import { useInstalledConfigProblems } from "./installed-crossplane";

/**
 * How the environment stack runs Crossplane core, from `klutch:crossplane` and the control
 * plane. Pure: the caller passes the file reader (validation and the program read the same
 * node state).
 *
 * - `process`: `crossplane.runLocally`; core runs as a process on this machine
 *   (`npm run clusters -- crossplane start`), the chart's core and RBAC manager at zero replicas.
 * - `node`: a local control plane with a node; the chart's pods run as the chart deploys them,
 *   from the `klutch.local/crossplane` image that node imported (nothing can be pulled here),
 *   and Pulumi waits for them like on any cluster.
 * - `cluster`: any other control plane; the published image from the chart's repository.
 * - `installed`: `crossplane.useInstalled`; the core an operator runs already (installed-crossplane.ts).
 *
 * On local clusters the chart and CRDs come from the toolchain (no chart repository is
 * reachable). Of the packages, only the project's own can be had: `npm run clusters -- up`
 * publishes them to the local registry (host/local-clusters/registry), from which a node's Crossplane
 * installs them (`packages`). Upstream's packages cannot be pulled, so no ProviderConfig is
 * installed; a core without a node (`process`) runs no function pods, so its compositions are
 * rendered without functions.
 */
export type CrossplaneRun =
  | { kind: "process" }
  | {
      kind: "node";
      image: ImageRef;
      packages: LocalPackages;
      /**
       * The node: its address (where app clusters' nodes reach its NodePorts) and its images
       * (the PostgreSQL image the local data-service backend runs among them).
       */
      node: { address?: string; images: Record<string, string> };
    }
  | { kind: "cluster" }
  /** `crossplane.useInstalled`: the operator's core on an existing control plane; no chart. */
  | { kind: "installed" };

/**
 * Flags Crossplane core runs with on local clusters, as a process or as the node's pod.
 * Realtime compositions (beta, on by default in 1.20) rely on watches of composed kinds, and
 * 1.20 can miss a composed resource's change and leave its XR unready for good
 * (crossplane/crossplane#6455; seen here with NetworkPaths), so they are off. Without them an
 * unready XR is checked again after a back-off of 1 to 30 s and a Ready one every poll interval
 * ("Requeue immediately (subject to backoff)" and `RequeueAfter: jitter(r.pollInterval)` in
 * internal/controller/apiextensions/composite/reconciler.go at v1.20.11). What a path's
 * composite waits for, the bridge announces at once (compositeNudge, readiness-relay.ts), so
 * the poll only bounds how late a Ready XR sees a change nobody announced. The one such change
 * a user waits for locally is a deleted binding: the local backend drops its role when the
 * instance's next reconcile sees it gone (programs/composition-function/binding-roles.ts), within a
 * poll. 30 s keeps that short. A 5 s poll made every Ready XR compose again every 5 s, about
 * ten API requests each (its composed resources, itself, its claim, events): with the 100
 * connections of bridge.test.ts that kept the control plane's API server near half a core,
 * as its request counters showed.
 *
 * Kept for Crossplane 2.4 too, after a trial of its defaults (realtime on, 2026-12-05): the #6455
 * cause is fixed in 2.x (crossplane/crossplane#6462), and a composite then followed its composed
 * resources at once (claims 0.6 to 2.1 s behind their NetworkPaths in the chaos run; a deleted
 * binding's role dropped 1.8 s after the delete, since v2.4 watches a function's required
 * resources too). But v2's per-XR watch circuit breaker (100 events' burst, 1 a second; an update
 * counts twice) opened on a WireGuard binding while its XTCPConnection was being created
 * ("Too many watch events from XTCPConnection/…"), and with realtime the XR poll is off
 * (`composite.WithPollInterval(0)`, definition/reconciler.go:608), so the binding then followed
 * its connection only at the breaker's probe every 30 s: Ready after 69 s, not Ready 68 s after
 * its path was (environment-bridge e2e). Upstream: crossplane/crossplane#6910, #7703.
 */
export const LOCAL_CORE_FLAGS = ["--enable-realtime-compositions=false", "--poll-interval=30s"];

export interface ImageRef {
  repository: string;
  tag: string;
}

export interface CrossplanePlan {
  run: CrossplaneRun;
  /** The core's version: `crossplane.version`, or the default for how it runs (crossplane-versions.ts). */
  version: string;
  /** Chart and CRDs from the toolchain's Crossplane module rather than a chart repository. */
  toolchainChart: boolean;
  /** Whether the package manager can pull packages (functions, providers). */
  packagesPullable: boolean;
}

export interface CrossplanePlanInput {
  controlPlane: Located<ControlPlaneConfig>;
  crossplane: CrossplaneConfig;
  /** The local clusters' directory, absolute (klutch:localClusters.stateDir resolved). */
  localStateDir: string;
  readFile: (file: string) => string;
}

/** Splits `repository:tag` at the tag's colon (a registry host may carry a port). */
export function splitImageReference(reference: string): ImageRef | undefined {
  const m = /^([^@\s]+\/[^:@/\s]+|[^:@/\s]+):([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$/.exec(reference);
  return m ? { repository: m[1]!, tag: m[2]! } : undefined;
}

/** The plan, or undefined when the config cannot run Crossplane (each problem goes to `add`). */
export function planCrossplane(input: CrossplanePlanInput, add: AddIssue): CrossplanePlan | undefined {
  const cp = input.controlPlane.value;
  if (input.crossplane.useInstalled) {
    const problems = useInstalledConfigProblems(cp, input.crossplane);
    for (const p of problems) add(p.at, p.message);
    const version = input.crossplane.version ?? defaultCrossplaneVersion(false);
    return problems.length
      ? undefined
      : { run: { kind: "installed" }, version, toolchainChart: false, packagesPullable: true };
  }
  const local = cp.infrastructure === "local";
  const hasNode = local && (cp.nodes ?? 0) > 0;
  const runLocally = input.crossplane.runLocally ?? (local && !hasNode);
  const version = input.crossplane.version ?? defaultCrossplaneVersion(runLocally);
  const versionProblem = crossplaneVersionProblem(version, runLocally);
  if (versionProblem) {
    add(["crossplane", "version"], versionProblem);
    return undefined;
  }
  const common = { version, toolchainChart: local || runLocally, packagesPullable: !local };
  if (local && input.crossplane.functionKlutch) {
    add(
      ["crossplane", "functionKlutch"],
      `is ${input.crossplane.functionKlutch}, but the local control plane "${cp.name}" pulls no packages: its Crossplane installs Klutch's function from the local registry that \`npm run clusters -- up\` fills, so remove crossplane.functionKlutch`,
    );
    return undefined;
  }
  if (runLocally) return { run: { kind: "process" }, ...common };
  if (!local) return { run: { kind: "cluster" }, ...common };

  const nodesAt = [...input.controlPlane.at, "nodes"];
  if (!hasNode) {
    add(
      ["crossplane", "runLocally"],
      `is false, but the local control plane "${cp.name}" has no node (${formatPath(nodesAt)} is ${cp.nodes ?? 0}), so no Crossplane pod can start and no chart repository is reachable: set crossplane.runLocally to true (core as a process, \`npm run clusters -- crossplane start\`) or ${formatPath(nodesAt)} to 1 (the chart's pods, from the node's klutch.local/crossplane image)`,
    );
    return undefined;
  }
  const start = "start it with `npm run clusters -- up` (it reads the stack's `nodes`), then run again";
  const read = readNodeImages(path.join(input.localStateDir, cp.name), input.readFile);
  if (!read.ok) {
    add(
      nodesAt,
      read.missing
        ? `is ${cp.nodes}, but the node of "${cp.name}" has not been started (${read.problem}), so Crossplane has no image to run: ${start}`
        : `${read.problem}: ${start}`,
    );
    return undefined;
  }
  const reference = read.images.crossplane;
  const image = reference ? splitImageReference(reference) : undefined;
  if (!image) {
    add(
      nodesAt,
      `the node of "${cp.name}" holds no crossplane image (${read.file} lists ${Object.keys(read.images).join(", ") || "none"}): restart it with \`npm run clusters -- up\` so that it imports klutch.local/crossplane`,
    );
    return undefined;
  }
  if (!image.tag.startsWith(`${version}-`)) {
    add(
      ["crossplane", "version"],
      `is ${version}${input.crossplane.version ? "" : " (the default)"}, but the node of "${cp.name}" holds Crossplane ${reference} (the toolchain's build): set crossplane.version to the toolchain's version, or rebuild the toolchain and restart the node with \`npm run clusters -- up\``,
    );
    return undefined;
  }
  const packages = readLocalPackages(input.localStateDir, read.registry, input.readFile);
  if (!packages.ok) {
    add(
      nodesAt,
      `the node of "${cp.name}" cannot install the project's Crossplane packages (${packages.problem}): ${start}`,
    );
    return undefined;
  }
  return {
    run: {
      kind: "node",
      image,
      packages: packages.packages,
      node: { images: read.images, ...(read.nodeAddress ? { address: read.nodeAddress } : {}) },
    },
    ...common,
  };
}
