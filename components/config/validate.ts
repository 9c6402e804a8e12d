import { withImageRegistry } from "./images";
import * as path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { cidrsOverlap } from "../../lib/net/cidr";
import { LOCAL_DEFAULT_POD_CIDR, LOCAL_NODE_LINK_RANGE, LOCAL_SERVICE_CIDR } from "../../lib/local/network";
import type { ConnectorCheckInput } from "../../network/contract/implementation";
import type { AddIssue, Located } from "../../lib/config/located";
import { IMPLEMENTATIONS } from "../../network/registry";
import { checkAwsCluster } from "../../lib/cloud/aws/checks";
import { checkOpenstackNetwork } from "../../lib/cloud/openstack/checks";
import type { z } from "zod";
import { ConfigIssue, errorMap, formatPath, zodIssues } from "../../lib/config/messages";
import {
  ClusterConfig,
  ControlPlaneConfig,
  DEFAULT_EXPORTED_APIS,
  type ExportedApiConfig,
  SECRET_SETTINGS,
  SETTING_KEYS,
  controlPlaneCluster as controlPlaneSchema,
  exportedApi as exportedApiSchema,
  bridge as bridgeSchema,
  crossplane as crossplaneSchema,
  instanceNames as instanceNamesSchema,
} from "../../lib/config/schema";
import { planInstanceNames } from "../../lib/instance-names/plan";
import {
  AppClusterConfig,
  EnvironmentConfig,
  appCluster as appClusterSchema,
  environmentSchema,
} from "./schema";
import { planBridge } from "../../lib/bridge/bridge-plan";
import { awsCredentialsProblem, type BridgeState } from "../../lib/bridge/deployment";
import { clusterWideGrants } from "../../lib/bind/contract";
import { planCrossplane } from "../../lib/crossplane/crossplane-plan";

/** What validation may look at outside the config itself; injected so tests need no real files. */
export interface ValidationContext {
  /** Directory that relative paths are resolved against (the project directory). */
  projectDir: string;
  /** Reads a file's text; throws when it does not exist or cannot be read. */
  readFile: (file: string) => string;
}

export type ValidationResult = { ok: true; config: EnvironmentConfig } | { ok: false; issues: ConfigIssue[] };

/**
 * Validates the raw `klutch:` settings (keys without the namespace). Shape errors and the
 * rules that relate settings are all collected, so one run reports every problem.
 */
export function validateEnvironment(raw: Record<string, unknown>, ctx: ValidationContext): ValidationResult {
  const issues: ConfigIssue[] = [];
  for (const key of Object.keys(raw)) {
    if (!SETTING_KEYS.includes(key)) {
      const hint = SETTING_KEYS.find((k) => k.toLowerCase().startsWith(key.toLowerCase().slice(0, 5)));
      issues.push({
        path: `klutch:${key}`,
        message: `unknown setting${hint ? `; did you mean klutch:${hint}?` : ""} (settings: ${SETTING_KEYS.join(", ")})`,
      });
    }
  }
  const plain = Object.fromEntries(
    Object.entries(raw).filter(
      ([k]) => SETTING_KEYS.includes(k) && !(SECRET_SETTINGS as readonly string[]).includes(k),
    ),
  );
  const parsed = environmentSchema.safeParse(plain, { error: errorMap });
  if (!parsed.success) issues.push(...zodIssues(parsed.error, plain));
  issues.push(...crossChecks(plain, ctx, raw));
  issues.push(...secretChecks(raw, plain));
  if (issues.length > 0 || !parsed.success) return { ok: false, issues: dedupe(issues) };
  return { ok: true, config: withImageRegistry(parsed.data) };
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Rules across settings. They run on every cluster entry that is well-formed on its own,
 * even when other entries are not, so the operator sees all problems in one run.
 */
function crossChecks(
  raw: Record<string, unknown>,
  ctx: ValidationContext,
  withSecrets: Record<string, unknown>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  // Fields left out of an entry because they are malformed (the schema reports them): a rule
  // about such a field, or about the object that holds it, would only repeat or mislead.
  const setAside: (string | number)[][] = [];
  const add = (at: (string | number)[], message: string) => {
    if (setAside.some((p) => isPrefix(p, at) || isPrefix(at, p))) return;
    issues.push({ path: formatPath(at), message });
  };

  const cp = parseWithout(controlPlaneSchema, raw.controlPlane);
  const controlPlane: Located<ControlPlaneConfig> | undefined = cp
    ? { value: cp.value, at: ["controlPlane"] }
    : undefined;
  for (const p of cp?.setAside ?? []) setAside.push(["controlPlane", ...p]);
  const apps: Located<AppClusterConfig>[] = [];
  if (Array.isArray(raw.appClusters)) {
    raw.appClusters.forEach((entry, i) => {
      const r = parseWithout(appClusterSchema, entry);
      if (!r) return;
      apps.push({ value: r.value, at: ["appClusters", i] });
      for (const p of r.setAside) setAside.push(["appClusters", i, ...p]);
    });
  }
  const clusters: Located<ClusterConfig>[] = [...(controlPlane ? [controlPlane] : []), ...apps];

  // Names identify clusters in resource names and kubeconfig paths, so they must be unique.
  // Checked on the raw entries so that a problem elsewhere in an entry does not hide it.
  const rawClusters: { name: unknown; at: (string | number)[] }[] = [
    { name: (raw.controlPlane as { name?: unknown } | undefined)?.name, at: ["controlPlane"] },
    ...(Array.isArray(raw.appClusters) ? raw.appClusters : []).map((e: unknown, i) => ({
      name: (e as { name?: unknown } | undefined)?.name,
      at: ["appClusters", i],
    })),
  ];
  const firstByName = new Map<string, (string | number)[]>();
  for (const c of rawClusters) {
    if (typeof c.name !== "string") continue;
    const prior = firstByName.get(c.name);
    if (prior)
      add(
        [...c.at, "name"],
        `"${c.name}" is already used by ${formatPath(prior)}; cluster names must be unique`,
      );
    else firstByName.set(c.name, c.at);
  }

  const stateDir = localStateDir(raw.localClusters);
  for (const c of clusters) checkInfrastructure(c, stateDir, ctx, add);
  // A local node pulls nothing: it runs the images this machine built and imported.
  const local = clusters.find((c) => c.value.infrastructure === "local");
  if (typeof raw.imageRegistry === "string" && raw.imageRegistry && local)
    add(
      ["imageRegistry"],
      `"${raw.imageRegistry}" is for clusters that pull their images, but ${formatPath(local.at)} (${local.value.name}) is a local cluster, which runs the images built on this machine and pulls nothing: remove klutch:imageRegistry`,
    );

  // Each network implementation's own rules, over the app clusters that use it.
  for (const impl of IMPLEMENTATIONS) {
    const users = apps
      .filter((a) => a.value.networkConnector.implementation === impl.name)
      .map((a) => ({ ...a, connector: a.value.networkConnector }));
    // The registry pairs each implementation with its schema, so its users' connectors have
    // that schema's type; TypeScript cannot follow that through the loop.
    (impl.check as ((input: ConnectorCheckInput<unknown>) => void) | undefined)?.({
      users,
      appClusters: apps,
      controlPlane,
      add,
    });
  }
  checkApis(raw.exportedApis, apps, add);
  checkConsumerNamespaces(raw.bind, apps, add);
  checkBindBackend(raw.bind, add, exportedApisOrDefault(raw.exportedApis));
  checkBridge(raw.bridge, withSecrets, controlPlane, apps, stateDir, ctx, add);
  checkCrossplane(raw.crossplane, controlPlane, stateDir, ctx, add);
  checkInstanceNames(raw.instanceNames, raw.bridge, apps, stateDir, ctx, add);
  return issues;
}

/**
 * The bridge Deployment's rules (lib/bridge/bridge-plan.ts: a node to run on, the node's
 * images, a shared state), and its passphrase when it is deployed. A malformed bridge entry is
 * reported by the schema alone.
 */
function checkBridge(
  rawBridge: unknown,
  secrets: Record<string, unknown>,
  controlPlane: Located<ControlPlaneConfig> | undefined,
  apps: Located<AppClusterConfig>[],
  stateDir: string,
  ctx: ValidationContext,
  add: Add,
): void {
  const parsed = bridgeSchema.prefault({}).safeParse(rawBridge);
  if (!parsed.success || !controlPlane) return;
  const plan = planBridge(
    { ...plannerContext(controlPlane, stateDir, ctx), appClusters: apps, bridge: parsed.data },
    add,
  );
  const cp = controlPlane.value;
  const hasNode = cp.infrastructure === "local" && (cp.nodes ?? 0) > 0;
  // Asked for and possible (a local control plane without a node is refused above).
  const deployed =
    plan !== undefined || ((parsed.data.deploy ?? hasNode) && (cp.infrastructure !== "local" || hasNode));
  checkStateCredentials(secrets.bridgeStateCredentials, deployed, parsed.data, add);
  if (!deployed) return;
  // Never repeat the value: a message can end up in a CI log.
  const passphrase = secrets.bridgePassphrase;
  const text = typeof passphrase === "string" ? passphrase : "";
  const set = 'set it with `pulumi config set --secret klutch:bridgePassphrase "$(openssl rand -base64 24)"`';
  if (!text)
    add(
      ["bridgePassphrase"],
      `is required when the bridge is deployed (it encrypts the secrets in the bridge's own stacks): ${set}`,
    );
  else if (text.length < 16)
    add(["bridgePassphrase"], `must be at least 16 characters (the value given has ${text.length}): ${set}`);
}

/**
 * The deployed bridge's S3 credentials: only where its state is in S3, and the text of an AWS
 * shared credentials file (lib/bridge/deployment.ts awsCredentialsProblem). Never repeats it.
 */
function checkStateCredentials(
  credentials: unknown,
  deployed: boolean,
  bridge: { state?: BridgeState | undefined; awsRoleArn?: string | undefined },
  add: Add,
): void {
  const text = typeof credentials === "string" ? credentials : "";
  if (!text) return;
  const field = ["bridgeStateCredentials"];
  const state = bridge.state;
  if (bridge.awsRoleArn) {
    add(
      field,
      `is set, and so is bridge.awsRoleArn (${bridge.awsRoleArn}): the AWS SDK in the bridge's pods would use only one of them, so keep one (\`npm run pulumi -- config rm klutch:bridgeStateCredentials\` to use the role)`,
    );
    return;
  }
  const set =
    "`npm run pulumi -- config set --secret klutch:bridgeStateCredentials < credentials` (a file with a [default] profile naming aws_access_key_id and aws_secret_access_key)";
  if (!deployed || state?.kind !== "backend" || !state.url.startsWith("s3://")) {
    const where = !deployed
      ? "this environment deploys no bridge"
      : state?.kind === "backend"
        ? `this environment's bridge keeps its state at ${state.url.split("?")[0]}`
        : "this environment's bridge keeps its state in a hostPath on its node";
    add(
      field,
      `is for a deployed bridge whose state is in S3 (bridge.state {kind: backend, url: s3://…}), but ${where}: remove it with \`npm run pulumi -- config rm klutch:bridgeStateCredentials\``,
    );
    return;
  }
  const problem = awsCredentialsProblem(text);
  if (problem) add(field, `${problem}: set it with ${set}`);
}

/** How Crossplane core can run on this control plane (lib/crossplane/crossplane-plan.ts). */
function checkCrossplane(
  rawCrossplane: unknown,
  controlPlane: Located<ControlPlaneConfig> | undefined,
  stateDir: string,
  ctx: ValidationContext,
  add: Add,
): void {
  const parsed = crossplaneSchema.prefault({}).safeParse(rawCrossplane);
  // A malformed entry is reported by the schema already.
  if (!parsed.success || !controlPlane) return;
  planCrossplane({ ...plannerContext(controlPlane, stateDir, ctx), crossplane: parsed.data }, add);
}

/** Where each app cluster's names server can run (lib/instance-names/plan.ts). */
function checkInstanceNames(
  rawNames: unknown,
  rawBridge: unknown,
  apps: Located<AppClusterConfig>[],
  stateDir: string,
  ctx: ValidationContext,
  add: Add,
): void {
  const parsed = instanceNamesSchema.prefault({}).safeParse(rawNames);
  // A malformed entry is reported by the schema already.
  if (!parsed.success) return;
  const bridge = bridgeSchema.prefault({}).safeParse(rawBridge);
  planInstanceNames(
    {
      appClusters: apps,
      names: parsed.data,
      ...(bridge.success && bridge.data.image ? { bridgeImage: bridge.data.image } : {}),
      localStateDir: path.resolve(ctx.projectDir, stateDir),
      readFile: ctx.readFile,
    },
    add,
  );
}

/** What the runtime planners (bridge, Crossplane) read: the control plane and its node's state. */
function plannerContext(
  controlPlane: Located<ControlPlaneConfig>,
  stateDir: string,
  ctx: ValidationContext,
): { controlPlane: Located<ControlPlaneConfig>; localStateDir: string; readFile: (file: string) => string } {
  return { controlPlane, localStateDir: path.resolve(ctx.projectDir, stateDir), readFile: ctx.readFile };
}

const isPrefix = (prefix: (string | number)[], of: (string | number)[]) =>
  prefix.length <= of.length && prefix.every((p, i) => p === of[i]);

/**
 * Parses one cluster entry for the rules across settings, leaving out what the schema refuses:
 * a malformed field is removed (and, when the schema then misses it, the object that holds it),
 * until the rest parses. So one bad field (a `nodeCidr` with host bits) does not hide the rules
 * about the entry's other fields (its availability zones). The schema's own issues are reported
 * by validateEnvironment; this only decides what the cross-setting rules can still look at.
 */
function parseWithout<T>(
  schema: z.ZodType<T, unknown>,
  entry: unknown,
): { value: T; setAside: (string | number)[][] } | undefined {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return undefined;
  const current = structuredClone(entry) as Record<string, unknown>;
  const setAside: (string | number)[][] = [];
  // Each round removes at least one field, so an entry of n fields takes at most n rounds.
  for (let round = 0; round < 50; round++) {
    const r = schema.safeParse(current);
    if (r.success) return { value: r.data, setAside };
    let removed = false;
    for (const issue of r.error.issues) {
      for (let depth = issue.path.length; depth > 0 && !removed; depth--) {
        const at = issue.path.slice(0, depth) as (string | number)[];
        if (removeAt(current, at)) {
          setAside.push(at);
          removed = true;
        }
      }
    }
    if (!removed) return undefined;
  }
  return undefined;
}

/** Deletes the value at a path; false when there is none (a required field already missing). */
function removeAt(root: Record<string, unknown>, at: (string | number)[]): boolean {
  let node: unknown = root;
  for (const key of at.slice(0, -1)) {
    if (node === null || typeof node !== "object") return false;
    node = (node as Record<string | number, unknown>)[key];
  }
  const last = at[at.length - 1] as string | number;
  if (node === null || typeof node !== "object" || !(last in node)) return false;
  if (Array.isArray(node) && typeof last === "number") node.splice(last, 1);
  else delete (node as Record<string | number, unknown>)[last];
  return true;
}

/**
 * Rules of the pinned klutch-bind releases that the schema cannot say: the backend has no
 * leader election (nothing under contrib/example-backend takes a lease), so two replicas would
 * both run every controller.
 */
export function checkBindBackend(rawBind: unknown, add: Add, exportedApis: ExportedApiConfig[]): void {
  const replicas = (rawBind as { replicas?: unknown } | undefined)?.replicas;
  if (typeof replicas === "number" && replicas > 1) {
    add(
      ["bind", "replicas"],
      `must be 1 (got ${replicas}): the klutch-bind backend has no leader election, so every replica would run its controllers; set bind.replicas to 1`,
    );
  }
  if ((rawBind as { consumerScope?: unknown } | undefined)?.consumerScope === "Cluster") {
    add(["bind", "consumerScope"], clusterScopeRefusal(exportedApis));
  }
}

/**
 * Why `consumerScope: Cluster` is refused, from what the contract says that scope grants
 * (lib/bind/contract.ts clusterWideGrants): the backend binds every binding's
 * klutch-binder-<cns> ClusterRole cluster-wide, and each app cluster holds that identity's
 * kubeconfig. Upstream offers the scope for kcp, where each binding is a workspace of its own
 * (the flag's help in contrib/example-backend/options/options.go); on a Kubernetes control
 * plane nothing then separates one consumer from another.
 */
export function clusterScopeRefusal(exportedApis: ExportedApiConfig[]): string {
  const resources = clusterWideGrants("Cluster", exportedApis).flatMap((r) =>
    r.resources.map((res) => (r.apiGroups[0] ? `${res}.${r.apiGroups[0]}` : res)),
  );
  return (
    `"Cluster" is refused: the klutch-bind backend then binds ClusterRole klutch-binder-<namespace> cluster-wide ` +
    `(ClusterRoleBinding, controllers/clusterbinding/clusterbinding_reconcile.go), so the kubeconfig on every app cluster ` +
    `could get, list, create, update and delete ${resources.join(", ") || "every exported and claimed resource"} in every namespace of the control plane, ` +
    `other app clusters' included. Upstream meant this scope for kcp workspaces. ` +
    `Leave consumerScope out or set it to Namespaced`
  );
}

/** Each app cluster's consumer namespace on the control plane is `<namespacePrefix>-<name>`. */
function checkConsumerNamespaces(rawBind: unknown, apps: Located<AppClusterConfig>[], add: Add): void {
  const prefix = (rawBind as { namespacePrefix?: unknown } | undefined)?.namespacePrefix;
  const p = typeof prefix === "string" && prefix.length > 0 ? prefix : "cluster";
  for (const app of apps) {
    const ns = `${p}-${app.value.name}`;
    if (ns.length > 63) {
      add(
        [...app.at, "name"],
        `makes the consumer namespace "${ns}" (${ns.length} characters; at most 63): shorten the name or bind.namespacePrefix`,
      );
    }
  }
}

type Add = AddIssue;

function localStateDir(raw: unknown): string {
  const dir = (raw as { stateDir?: unknown } | undefined)?.stateDir;
  return typeof dir === "string" && dir.length > 0 ? dir : ".klutch/local";
}

/** Path of the kubeconfig that `npm run clusters -- up` writes for a local cluster. */
export function localKubeconfigPath(projectDir: string, stateDir: string, cluster: string): string {
  return path.resolve(projectDir, stateDir, cluster, "kubeconfig");
}

function checkInfrastructure(
  c: Located<ClusterConfig>,
  stateDir: string,
  ctx: ValidationContext,
  add: Add,
): void {
  const { value, at } = c;
  const infra = value.infrastructure;
  for (const block of ["aws", "openstack"] as const) {
    if (value[block] && infra !== block) {
      add(
        [...at, block],
        `is only allowed with infrastructure "${block}" (this cluster is "${infra}"); remove it`,
      );
    }
  }
  if (value.nodes !== undefined && infra !== "local") {
    add([...at, "nodes"], `is only for infrastructure "local" (this cluster is "${infra}"); remove it`);
  }
  switch (infra) {
    case "existing":
      if (!value.kubeconfig) {
        add(
          [...at, "kubeconfig"],
          'is required for infrastructure "existing": set kubeconfig.path to the cluster\'s kubeconfig file',
        );
      } else {
        checkKubeconfigFile(
          path.resolve(ctx.projectDir, value.kubeconfig.path),
          value.kubeconfig.context,
          [...at, "kubeconfig"],
          ctx,
          add,
        );
      }
      break;
    case "local":
      if (value.kubeconfig) {
        add(
          [...at, "kubeconfig"],
          'is not used with infrastructure "local" (the local clusters write their own); remove it, or use infrastructure "existing"',
        );
      } else {
        const file = localKubeconfigPath(ctx.projectDir, stateDir, value.name);
        checkKubeconfigFile(
          file,
          undefined,
          [...at, "infrastructure"],
          ctx,
          add,
          "start the local clusters first with `npm run clusters -- up`",
        );
      }
      break;
    case "aws":
      if (!value.aws) add([...at, "aws"], 'is required for infrastructure "aws": set at least aws.region');
      if (!value.network)
        add([...at, "network"], 'is required for infrastructure "aws": set network.nodeCidr to the VPC CIDR');
      if (value.aws) checkAwsCluster(value.aws, value.network?.nodeCidr, !!value.kubeconfig, at, add);
      break;
    case "openstack":
      if (!value.openstack)
        add(
          [...at, "openstack"],
          'is required for infrastructure "openstack": set at least openstack.externalNetworkId',
        );
      if (!value.network)
        add(
          [...at, "network"],
          'is required for infrastructure "openstack": the Magnum cluster template needs a network; set network.nodeCidr to the subnet CIDR',
        );
      if (value.kubeconfig) {
        // An existing Magnum (or other) cluster in the project, reached by its kubeconfig.
        checkKubeconfigFile(
          path.resolve(ctx.projectDir, value.kubeconfig.path),
          value.kubeconfig.context,
          [...at, "kubeconfig"],
          ctx,
          add,
        );
      }
      if (value.network) checkOpenstackNetwork(value.network.nodeCidr, at, add);
      break;
  }
  const net = value.network;
  if (net && infra === "local") checkLocalNetwork(net, [...at, "network"], add);
  if (net) {
    for (const other of ["podCidr", "serviceCidr"] as const) {
      const cidr = net[other];
      if (cidr && cidrsOverlap(cidr, net.nodeCidr)) {
        add(
          [...at, "network", other],
          `${cidr} overlaps the cluster's nodeCidr ${net.nodeCidr}; choose a disjoint range`,
        );
      }
    }
    if (net.podCidr && net.serviceCidr && cidrsOverlap(net.podCidr, net.serviceCidr)) {
      add(
        [...at, "network", "serviceCidr"],
        `${net.serviceCidr} overlaps podCidr ${net.podCidr}; choose a disjoint range`,
      );
    }
  }
}

/**
 * A local cluster's ranges are the project's (lib/local/network.ts): its API server serves
 * Services from LOCAL_SERVICE_CIDR whatever the config says, and its node reaches this machine
 * over LOCAL_NODE_LINK_RANGE. A setting that differs would be believed by the other checks
 * (WireGuard's tunnel, routes) while the cluster does otherwise.
 */
function checkLocalNetwork(
  net: NonNullable<ClusterConfig["network"]>,
  at: (string | number)[],
  add: Add,
): void {
  if (net.serviceCidr && net.serviceCidr !== LOCAL_SERVICE_CIDR) {
    add(
      [...at, "serviceCidr"],
      `${net.serviceCidr} is not the local clusters' Service range: their API servers serve Services from ${LOCAL_SERVICE_CIDR} (--service-cluster-ip-range); remove it or set it to ${LOCAL_SERVICE_CIDR}`,
    );
  }
  if (net.podCidr) {
    for (const [range, what] of [
      [LOCAL_SERVICE_CIDR, "the local clusters' Service range"],
      [LOCAL_NODE_LINK_RANGE, "the local nodes' links to this machine"],
    ] as const) {
      if (cidrsOverlap(net.podCidr, range)) {
        add(
          [...at, "podCidr"],
          `${net.podCidr} overlaps ${what} (${range}); pods would be unreachable there: choose a disjoint range such as ${LOCAL_DEFAULT_POD_CIDR}`,
        );
      }
    }
  }
}

function checkKubeconfigFile(
  file: string,
  context: string | undefined,
  at: (string | number)[],
  ctx: ValidationContext,
  add: Add,
  missingHint = "point kubeconfig.path at an existing file",
): void {
  let text: string;
  try {
    text = ctx.readFile(file);
  } catch {
    add(at, `kubeconfig file ${file} does not exist or cannot be read; ${missingHint}`);
    return;
  }
  // The client library's KubeConfig reads it, as kubectl's loader would (YAML, field names,
  // paths relative to the file), instead of a hand-written reading.
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (e) {
    add(
      at,
      `kubeconfig file ${file} is not valid YAML or not a kubeconfig (${(e as Error).message.split("\n")[0]})`,
    );
    return;
  }
  if (kc.clusters.length === 0 || kc.contexts.length === 0) {
    add(at, `kubeconfig file ${file} has no clusters or contexts; is it a kubeconfig?`);
    return;
  }
  const names = kc.contexts.map((c) => c.name);
  const wanted = context ?? (kc.getCurrentContext() || undefined);
  if (!wanted) {
    add(
      at,
      `kubeconfig file ${file} has no current-context; set kubeconfig.context to one of ${names.join(", ")}`,
    );
    return;
  }
  const chosen = kc.getContextObject(wanted);
  if (!chosen) {
    add(at, `context "${wanted}" is not in ${file}; contexts there: ${names.join(", ") || "none"}`);
    return;
  }
  const cluster = kc.getCluster(chosen.cluster);
  if (!cluster) {
    add(
      at,
      `context "${wanted}" in ${file} names cluster "${chosen.cluster}", which the file does not define`,
    );
    return;
  }
  kc.makePathsAbsolute(path.dirname(file));
  const caFile = kc.getCluster(chosen.cluster)?.caFile;
  if (caFile) {
    try {
      ctx.readFile(caFile);
    } catch {
      add(
        at,
        `the certificate-authority file ${caFile} of cluster "${chosen.cluster}" in ${file} cannot be read`,
      );
    }
  }
}

/** The exported APIs as parsed, the valid entries only (the schema reports the others). */
function exportedApisOrDefault(rawApis: unknown): ExportedApiConfig[] {
  const entries = Array.isArray(rawApis) ? rawApis : rawApis === undefined ? DEFAULT_EXPORTED_APIS : [];
  return entries.flatMap((e: unknown) => {
    const r = exportedApiSchema.safeParse(e);
    return r.success ? [r.data] : [];
  });
}

function checkApis(rawApis: unknown, apps: Located<AppClusterConfig>[], add: Add): void {
  const exported: { group: string; resource: string }[] = [];
  if (Array.isArray(rawApis)) {
    rawApis.forEach((entry, i) => {
      const r = exportedApiSchema.safeParse(entry);
      if (!r.success) return;
      // Templates and app clusters' `apis` name an exported API by its resource alone.
      const dup = exported.find((e) => e.resource === r.data.resource);
      if (dup)
        add(
          ["exportedApis", i, "resource"],
          dup.group === r.data.group
            ? `${r.data.resource}.${r.data.group} is exported twice; remove one entry`
            : `${r.data.resource} is already exported from ${dup.group || "the core group"}; exported resource names must be unique`,
        );
      else exported.push({ group: r.data.group, resource: r.data.resource });
    });
  } else if (rawApis === undefined) {
    for (const d of DEFAULT_EXPORTED_APIS) exported.push({ group: d.group, resource: d.resource });
  }
  const names = exported.map((e) => e.resource);
  for (const app of apps) {
    app.value.apis?.forEach((api, i) => {
      if (!names.includes(api)) {
        add(
          [...app.at, "apis", i],
          `"${api}" is not an exported API; exported: ${names.join(", ") || "none"} (add it to klutch:exportedApis or remove it here)`,
        );
      }
    });
  }
}

/** Length of base64 text once decoded, or undefined when it is not base64. */
function base64Bytes(value: string): number | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) return undefined;
  return Buffer.from(value, "base64").length;
}

/**
 * Checks of secret settings. Messages describe the value (its length, its form) and never
 * repeat it, so an error cannot leak a secret into a terminal or a CI log.
 */
// The backend accepts a 64-byte signing key alone, but its encryption-key check tests the
// signing key against 16/24/32 bytes (contrib/example-backend/options/cookie.go, v1.4.0 and
// v1.5.0), and this project always sets an encryption key: only 32 bytes start.
const COOKIE_KEY_LENGTHS = {
  bindCookieSigningKey: {
    lengths: [32],
    why: " (the backend also documents 64, but rejects it whenever an encryption key is set, as it always is here)",
  },
  bindCookieEncryptionKey: { lengths: [16, 24, 32], why: "" },
} as const;

/**
 * What is wrong with a cookie key (never echoing it: it is a secret), or undefined; an empty
 * value is no problem (one is generated). Shared with the klutch provider's bind backend.
 */
export function cookieKeyProblem(key: keyof typeof COOKIE_KEY_LENGTHS, value: string): string | undefined {
  if (!value) return undefined;
  const { lengths, why } = COOKIE_KEY_LENGTHS[key];
  const bytes = base64Bytes(value);
  if (bytes === undefined) return "must be base64 text (for example from `openssl rand -base64 32`)";
  if ((lengths as readonly number[]).includes(bytes)) return undefined;
  return `must decode to ${lengths.join(" or ")} bytes${why} (the value given decodes to ${bytes}); generate one with \`openssl rand -base64 ${lengths[lengths.length - 1]}\` or leave it empty to have one generated`;
}

function secretChecks(raw: Record<string, unknown>, plain: Record<string, unknown>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const add = (key: string, message: string) => issues.push({ path: `klutch:${key}`, message });
  const text = (key: string): string => (typeof raw[key] === "string" ? raw[key] : "");

  for (const key of ["bindCookieSigningKey", "bindCookieEncryptionKey"] as const) {
    const problem = cookieKeyProblem(key, text(key));
    if (problem) add(key, problem);
  }

  const bindTls = (plain.bind as { tls?: { source?: unknown } } | undefined)?.tls?.source;
  if (bindTls === "provided") {
    for (const [key, marker] of [
      ["bindTlsCertificate", "CERTIFICATE"],
      ["bindTlsKey", "PRIVATE KEY"],
    ] as const) {
      const value = text(key);
      if (!value)
        add(key, 'is required when bind.tls.source is "provided": set it with `pulumi config set --secret`');
      else if (!value.includes(`-----BEGIN `) || !value.includes(marker))
        add(key, `must be PEM text containing a ${marker} block`);
    }
  }

  const provider = (plain.oidc as { provider?: unknown } | undefined)?.provider;
  if (provider === "keycloak" && !text("oidcClientSecret")) {
    add(
      "oidcClientSecret",
      "is required for provider keycloak: set it with `pulumi config set --secret klutch:oidcClientSecret ...`",
    );
  }

  const services = (plain.crossplane as { anyninesServices?: unknown } | undefined)?.anyninesServices;
  const creds = raw.anyninesCredentials;
  const credMap =
    creds && typeof creds === "object" && !Array.isArray(creds) ? (creds as Record<string, unknown>) : {};
  if (creds !== undefined && creds !== "" && (typeof creds !== "object" || Array.isArray(creds))) {
    add("anyninesCredentials", "must be an object {<service name>: {username, password}}");
  }
  if (Array.isArray(services)) {
    services.forEach((svc: unknown, i) => {
      const entry = svc as { name?: unknown; backupManagerUrl?: unknown } | undefined;
      if (typeof entry?.name !== "string") return;
      const name = entry.name;
      const parts = entry.backupManagerUrl ? ["serviceBroker", "backupManager"] : ["serviceBroker"];
      const given = (credMap[name] ?? {}) as Record<
        string,
        { username?: unknown; password?: unknown } | undefined
      >;
      for (const part of parts) {
        const c = given[part];
        if (
          !c ||
          typeof c.username !== "string" ||
          typeof c.password !== "string" ||
          !c.username ||
          !c.password
        ) {
          issues.push({
            path: formatPath(["crossplane", "anyninesServices", i]),
            message: `needs credentials: set klutch:anyninesCredentials.${name}.${part}.username and .password with \`pulumi config set --secret --path\``,
          });
        }
      }
    });
  }
  return issues;
}
