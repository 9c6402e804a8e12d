import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { bridgeStatePaths } from "../bridge/state-dir";
import * as k8s from "@kubernetes/client-node";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import * as YAML from "yaml";
import {
  NETWORK_PATH_GROUP,
  NETWORK_PATH_PLURAL,
  NETWORK_PATH_VERSION,
  admitConnections,
  groupKey,
  isDeleting,
  isManaged,
  pathId,
  proxyName,
  realisationOf,
  stackName,
  type NetworkPathObject,
} from "../lib/bridge/model";
import type { ConnectionInput, PortGroupInput, PreviewInput } from "../lib/network-preview/model";
import type { Endpoint, Hop } from "../lib/network-preview/schema";
import { BRIDGE_PROGRAMS } from "../network/bridge-programs";
import { consumerEndpoints, proxyHost } from "../network/proxy/haproxy-config";
import { UNKNOWN as ENGINE_UNKNOWN } from "../network/proxy/port-allocation";
import { planPorts, type ReleasedPort } from "../network/proxy/port-planner";
import type { Target } from "../network/proxy/bridge-program";
import { toConnection } from "../network/proxy/bridge-program";
import { listenerKey, listenerKeys, type PortRange } from "../network/proxy/types";
import { groupPorts, parseSlots, placeGroup, type Slots } from "../lib/bridge/slots";
import { isImplementationName } from "../network/registry";
import { groupNamespace } from "../lib/bridge/grouping";
import { internalConsumers, nodePortHost, picksNodeHost, type NodeLike } from "../lib/bridge/node-host";
import { proxySettingsFor, wireguardSettingsFor, type BridgeSettings } from "../lib/bridge/settings";
import { planWireguardGroup } from "../network/wireguard/group-plan";
import { PROJECT } from "../bridge/stacks";
import { KubePathWriter } from "../bridge/client";
import { StepCollector, toHop, type ResourceStep } from "./engine-events";

/** Ports the local proxy keeps for its own stats and health listeners (network/proxy/bridge-program.ts). */
const LOCAL_OWN_LISTENERS = ["~stats", "~health"];

/** How the bridge runs: the same flags as bridge/main.ts, since the preview must plan as it does. */
export interface BridgeView {
  stateDir: string;
  /**
   * Where the bridge runs each group's proxy (bridge/target-options.ts, the bridge's own flags):
   * local HAProxy processes in a port block of the range, or TcpProxy on a cluster.
   */
  target: Target;
  /**
   * The settings the kubernetes target builds each group with (lib/bridge/settings.ts): what
   * the environment change plans, else what the settings ConfigMap holds now; none without either.
   */
  settings?: { value: BridgeSettings; from: "planned" | "live" };
  /**
   * The data plane's nodes as the preview listed them (kubernetes target), for the host a
   * NodePort proxy reports: the bridge picks it from the nodes on each run the same way.
   */
  nodes?: NodeLike[];
  /** Environment for the Pulumi CLI: backend, passphrase, PATH (see pulumiEnv). */
  pulumiEnv: Record<string, string>;
  portRange: PortRange;
  slotSize: number;
  /** The bridge's --max-ports-per-group (default: its whole range). */
  maxPortsPerGroup?: number;
  bindAddress: string;
}

/** One TCPConnection from the connections file. */
export interface ClaimChange {
  action: "apply" | "delete";
  namespace: string;
  name: string;
  implementation: string;
  instanceHost: string;
  port: number;
  enhancements?: Record<string, unknown>[];
}

export const DELETE_ANNOTATION = "klutch.anynines.com/preview-action";

/**
 * Reads a file of TCPConnection manifests (YAML, several documents or a List). A manifest
 * annotated `klutch.anynines.com/preview-action: delete` is previewed as deleted; every
 * other one as applied. The implementation is the claim's composition (compositionRef or
 * the implementation label of compositionSelector), else `defaultImplementation`.
 */
export function readClaims(file: string, defaultImplementation: string): ClaimChange[] {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS() as unknown);
  const items = docs.flatMap((d) => {
    const o = d as { kind?: string; items?: unknown[] } | null;
    return o?.kind === "List" && Array.isArray(o.items) ? o.items : [d];
  });
  const out: ClaimChange[] = [];
  items.forEach((raw, i) => {
    if (raw === null || raw === undefined) return;
    const o = raw as {
      kind?: string;
      metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
      spec?: {
        instanceHost?: string;
        port?: number;
        enhancements?: Record<string, unknown>[];
        compositionRef?: { name?: string };
        compositionSelector?: { matchLabels?: Record<string, string> };
      };
    };
    const where = `${file}: document ${i + 1}`;
    if (o.kind !== "TCPConnection")
      throw new Error(`${where} is a ${o.kind ?? "document without kind"}, not a TCPConnection`);
    const name = o.metadata?.name;
    const namespace = o.metadata?.namespace;
    if (!name || !namespace)
      throw new Error(`${where}: a TCPConnection needs metadata.name and metadata.namespace`);
    const action = o.metadata?.annotations?.[DELETE_ANNOTATION] === "delete" ? "delete" : "apply";
    const ref = o.spec?.compositionRef?.name?.replace(/^xtcpconnections-/, "");
    const selected = o.spec?.compositionSelector?.matchLabels?.["klutch.anynines.com/implementation"];
    const implementation = ref ?? selected ?? defaultImplementation;
    if (
      action === "apply" &&
      (typeof o.spec?.instanceHost !== "string" || typeof o.spec?.port !== "number")
    ) {
      throw new Error(`${where} (${namespace}/${name}): spec.instanceHost and spec.port are required`);
    }
    out.push({
      action,
      namespace,
      name,
      implementation,
      instanceHost: o.spec?.instanceHost ?? "",
      port: o.spec?.port ?? 0,
      ...(o.spec?.enhancements ? { enhancements: o.spec.enhancements } : {}),
    });
  });
  return out;
}

/** The control plane as the bridge sees it: every managed NetworkPath, and each claim's XR. */
export interface ControlPlaneView {
  paths: NetworkPathObject[];
  /** `namespace/claim` → the XR name (claim.spec.resourceRef.name), for claims that exist. */
  claimXr: Map<string, string>;
}

export async function readControlPlane(kubeconfig: string): Promise<ControlPlaneView> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const list = (await api.listClusterCustomObject({
    group: NETWORK_PATH_GROUP,
    version: NETWORK_PATH_VERSION,
    plural: NETWORK_PATH_PLURAL,
  })) as { items: NetworkPathObject[] };
  const claims = (await api
    .listClusterCustomObject({ group: "klutch.anynines.com", version: "v1", plural: "tcpconnections" })
    .catch(() => ({ items: [] }))) as {
    items: { metadata: { name: string; namespace: string }; spec?: { resourceRef?: { name?: string } } }[];
  };
  const claimXr = new Map<string, string>();
  for (const c of claims.items) {
    const xr = c.spec?.resourceRef?.name;
    if (xr) claimXr.set(`${c.metadata.namespace}/${c.metadata.name}`, xr);
  }
  return { paths: list.items.filter(isManaged), claimXr };
}

/** The bridge settings the ConfigMap holds now, as the bridge reads them (bridge/client.ts readSettings). */
export async function readLiveSettings(
  kubeconfig: string,
  ref: { namespace: string; name: string },
): Promise<BridgeSettings | undefined> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return new KubePathWriter(kc, ref).readSettings();
}

/** A path the bridge has not realised yet: its generation is ahead of what the status reports. */
export function isPending(p: NetworkPathObject): boolean {
  return (
    isDeleting(p) ||
    p.status?.observedGeneration === undefined ||
    p.status.observedGeneration !== p.metadata.generation
  );
}

/** The id a not-yet-composed claim has in the planned group, and how the report names it. */
const pendingId = (c: ClaimChange) => `${c.name}-pending`;
const pendingLabel = (c: ClaimChange) => `pending:${c.namespace}/${c.name}`;

export interface GroupPlan {
  key: string;
  /** Paths as the group stack would be run with after the change (live, not deleting). */
  after: NetworkPathObject[];
  /** Paths the group has now (realised or not). */
  before: NetworkPathObject[];
  added: ClaimChange[];
  deletedIds: Set<string>;
}

/**
 * The groups a change touches, each with its paths before and after: claims in the file
 * are matched to their NetworkPath through the claim's XR; pending paths on the control
 * plane (generation not yet realised) are previewed as they stand.
 */
export function planGroups(
  view: ControlPlaneView,
  claims: ClaimChange[],
  includePending: boolean,
  includeAll = false,
  namespaces: { removed?: readonly string[]; affected?: readonly string[] } = {},
): GroupPlan[] {
  const byXr = new Map(view.paths.map((p) => [p.spec.connection, p]));
  const groups = new Map<string, GroupPlan>();
  const group = (key: string): GroupPlan => {
    let g = groups.get(key);
    if (!g) {
      const before = view.paths.filter((p) => groupKey(p) === key);
      g = { key, before, after: before.filter((p) => !isDeleting(p)), added: [], deletedIds: new Set() };
      for (const p of before.filter(isDeleting)) g.deletedIds.add(pathId(p));
      groups.set(key, g);
    }
    return g;
  };
  if (includePending) for (const p of view.paths.filter(isPending)) group(groupKey(p));
  // Every group: what a change of the bridge's own settings (its port range) does to all of them.
  if (includeAll) for (const p of view.paths) group(groupKey(p));
  // The environment change reaches these namespaces' groups; a removed one loses every path,
  // as Kubernetes deletes the claims with their namespace and Crossplane their NetworkPaths.
  const removed = new Set(namespaces.removed ?? []);
  const nsOf = (p: NetworkPathObject) => groupKey(p).slice(0, groupKey(p).lastIndexOf("/"));
  for (const p of view.paths.filter((x) => (namespaces.affected ?? []).includes(nsOf(x)))) group(groupKey(p));
  for (const p of view.paths.filter((x) => removed.has(nsOf(x)))) {
    const g = group(groupKey(p));
    g.after = g.after.filter((x) => pathId(x) !== pathId(p));
    g.deletedIds.add(pathId(p));
  }
  for (const c of claims.filter((x) => !removed.has(x.namespace))) {
    const xr = view.claimXr.get(`${c.namespace}/${c.name}`);
    const existing = xr ? byXr.get(xr) : undefined;
    const key = existing ? groupKey(existing) : `${c.namespace}/${c.implementation}`;
    const g = group(key);
    if (existing && c.action === "delete") {
      g.after = g.after.filter((p) => pathId(p) !== pathId(existing));
      g.deletedIds.add(pathId(existing));
    } else if (existing) {
      g.after = g.after.map((p) =>
        pathId(p) === pathId(existing)
          ? {
              ...p,
              spec: {
                ...p.spec,
                instanceHost: c.instanceHost,
                port: c.port,
                ...(c.enhancements ? { enhancements: c.enhancements } : {}),
              },
            }
          : p,
      );
    } else if (c.action === "apply") {
      g.added.push(c);
      g.after.push({
        metadata: { name: pendingId(c), generation: 1 },
        spec: {
          implementation: c.implementation,
          connection: `${c.name}-pending`,
          consumerNamespace: c.namespace,
          instanceHost: c.instanceHost,
          port: c.port,
          ...(c.enhancements ? { enhancements: c.enhancements } : {}),
        },
      });
    }
  }
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

/**
 * The ports the bridge gives a local group for these paths (bridge/stacks.ts portsFor, with
 * lib/bridge/slots.ts's placement), without claiming them: a new group's slots, or slots a
 * group would grow into, are a prediction.
 */
export function localGroupRange(
  bridge: BridgeView,
  key: string,
  paths: NetworkPathObject[],
): { range: PortRange; reserved: number[]; predictedSlot: boolean } {
  let slots: Slots = {};
  try {
    slots = parseSlots(fs.readFileSync(bridgeStatePaths(bridge.stateDir).slots, "utf8"));
  } catch {
    // No slots yet: a bridge that has realised nothing.
  }
  const size = bridge.slotSize;
  const maxSlots = Math.floor((bridge.portRange.to - bridge.portRange.from + 1) / size);
  const ports = listenerKeys(admitConnections(paths.map(toConnection)).admitted).length + 2;
  const blocks = placeGroup(slots, key, ports, {
    slotSize: size,
    maxSlots,
    maxSlotsPerGroup: Math.max(1, Math.floor((bridge.maxPortsPerGroup ?? maxSlots * size) / size)),
  });
  const { range, reserved } = groupPorts(bridge.portRange, blocks, size);
  return { range, reserved, predictedSlot: JSON.stringify(slots[key]) !== JSON.stringify(blocks) };
}

function stackExists(bridge: BridgeView, stack: string): boolean {
  const backend = bridge.pulumiEnv.PULUMI_BACKEND_URL ?? "";
  if (!backend.startsWith("file://")) return true;
  const dir = path.join(backend.slice("file://".length), ".pulumi", "stacks", PROJECT);
  return ["json", "json.gz"].some((ext) => fs.existsSync(path.join(dir, `${stack}.${ext}`)));
}

/**
 * Previews one group through the bridge's own program (network/bridge-programs.ts) on the
 * bridge's own stack, as `pulumi preview --diff` would, and predicts the ports the way the
 * PortAllocation provider will compute them at `up`: its planner, fed the state the preview
 * read (old assignments and release history) and the inputs the program produced.
 */
export async function previewGroup(
  bridge: BridgeView,
  g: GroupPlan,
  progress: (line: string) => void,
): Promise<{ connections: ConnectionInput[]; ports?: PortGroupInput; notes: string[] }> {
  const implementation = g.key.slice(g.key.lastIndexOf("/") + 1);
  const notes: string[] = [];
  const program = isImplementationName(implementation) ? BRIDGE_PROGRAMS[implementation] : undefined;
  if (!program) {
    notes.push(`group ${g.key}: the bridge realises no ${implementation} paths; nothing to preview`);
    return { connections: [], notes };
  }
  const target = groupTarget(bridge, g, notes);
  const stack = stackName(g.key);
  const exists = stackExists(bridge, stack);
  // A new group's stack is previewed in a throw-away backend: the bridge's backend gets no
  // stack it did not make itself, and an empty state previews the same anywhere.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-preview-"));
  const envVars = { ...bridge.pulumiEnv };
  if (!exists) envVars.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
  fs.mkdirSync(path.join(work, "state"), { recursive: true });
  // The passphrase provider's salt lives in the stack's settings file of the bridge's workspace.
  const settings = path.join(bridgeStatePaths(bridge.stateDir).workspace, `Pulumi.${stack}.yaml`);
  if (exists && fs.existsSync(settings)) fs.copyFileSync(settings, path.join(work, `Pulumi.${stack}.yaml`));
  const collector = new StepCollector(progress);
  try {
    progress(`previewing group ${g.key} (stack ${stack}${exists ? "" : ", new"})`);
    if (g.after.length > 0) {
      const ws = await LocalWorkspace.createOrSelectStack(
        { stackName: stack, projectName: PROJECT, program: program(g.key, g.after, target) },
        { workDir: work, envVars, projectSettings: { name: PROJECT, runtime: "nodejs" } },
      );
      await ws.preview({ onEvent: collector.onEvent, diff: true, color: "never" });
    } else if (exists) {
      // No paths left: the bridge destroys the group's stack.
      const ws = await LocalWorkspace.selectStack(
        { stackName: stack, projectName: PROJECT, program: () => Promise.resolve({}) },
        { workDir: work, envVars, projectSettings: { name: PROJECT, runtime: "nodejs" } },
      );
      await ws.preview({ onEvent: collector.onEvent, diff: true, color: "never" });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { ...assemble(g, collector.all(), target, implementation), notes };
}

/**
 * The target the bridge builds this group with (bridge/stacks.ts targetFor): locally a port
 * block placed as the bridge places it; on a cluster its flags overlaid with the consumer
 * namespace's proxy settings.
 */
export function groupTarget(bridge: BridgeView, g: GroupPlan, notes: string[]): Target {
  const base = bridge.target;
  if (base.kind === "local") {
    const { range, reserved, predictedSlot } = localGroupRange(bridge, g.key, g.after);
    if (predictedSlot)
      notes.push(
        `group ${g.key}: its ports ${range.from}-${range.to}${reserved.length > 0 ? ` (less ${reserved.length} of other groups between its slots)` : ""} are where the bridge would place them now (new or grown)`,
      );
    return { ...base, portRange: range, reservedPorts: reserved };
  }
  const own = proxySettingsFor(bridge.settings?.value, groupNamespace(g.key));
  const wireguard = wireguardSettingsFor(bridge.settings?.value, groupNamespace(g.key));
  notes.push(
    `group ${g.key}: previewed on the kubernetes target (namespace ${base.namespace}), ` +
      (own
        ? `with its ${bridge.settings?.from === "planned" ? "planned" : "current"} proxy settings`
        : "with the bridge's flags (no proxy settings for its namespace)"),
  );
  const target = { ...base, ...own, ...(wireguard ? { wireguard } : {}) };
  if (!picksNodeHost(target) || !bridge.nodes) return target;
  const nodeHost = nodePortHost(bridge.nodes, internalConsumers(target));
  if (!nodeHost) return target;
  notes.push(`group ${g.key}: its NodePort proxy reports ${nodeHost}, the node the bridge would pick now`);
  return { ...target, nodeHost };
}

/**
 * Where consumers will dial a kubernetes-target group's proxy (TcpProxy's host, from
 * network/proxy/haproxy-config.ts proxyHost): the Service's DNS name for ClusterIP; for a
 * LoadBalancer the address its status holds now, unknown for a new one; for NodePort the
 * `--node-host` given or the node groupTarget picked as the bridge would now
 * (lib/bridge/node-host.ts), else unknown.
 */
function kubernetesHost(
  target: Extract<Target, { kind: "kubernetes" }>,
  name: string,
  steps: ResourceStep[],
): string {
  const serviceType = target.serviceType;
  if (serviceType === "ClusterIP") return proxyHost({ serviceName: name, namespace: target.namespace });
  if (serviceType === "LoadBalancer") {
    const service = steps.find((s) => s.name === `${name}-service`);
    const status = service?.op === "replace" ? undefined : service?.oldOutputs?.status;
    const ingress = (
      status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } | undefined
    )?.loadBalancer?.ingress?.[0];
    return ingress?.ip || ingress?.hostname || UNKNOWN_HOST;
  }
  return target.nodeHost ?? UNKNOWN_HOST;
}

/** A host the preview cannot know before `up` (a load balancer's address not yet assigned). */
const UNKNOWN_HOST = "unknown";

/** The report's connections and ports of one previewed group. */
export function assemble(
  g: GroupPlan,
  steps: ResourceStep[],
  target: Target,
  implementation: string,
): { connections: ConnectionInput[]; ports?: PortGroupInput } {
  const range = target.portRange;
  const realisation = realisationOf(implementation);
  const namespace = g.key.slice(0, g.key.lastIndexOf("/"));
  // The group's PortAllocation: "ports" in the local program, `<proxy>-ports` inside TcpProxy.
  const proxy = proxyName(g.key);
  const portsStep = steps.find((s) => s.name === (target.kind === "local" ? "ports" : `${proxy}-ports`));
  const host = target.kind === "local" ? target.bindAddress : kubernetesHost(target, proxy, steps);
  const plan = realisation === "proxy" && g.after.length > 0 ? predictPorts(portsStep) : undefined;
  const forwarded =
    realisation === "forwarded"
      ? planWireguardGroup(
          g.key,
          g.after,
          target.kind === "local" ? { kind: "local" } : { kind: "kubernetes", settings: target.wireguard },
        )
      : undefined;
  const proxied = admitConnections(g.after.map(toConnection));
  const admitted = proxied.admitted;
  // What the bridge refuses: its forwarded implementations' own rules, else the proxy's.
  const rejected: Record<string, { message: string }> = forwarded
    ? Object.fromEntries(
        g.after
          .map((p) => pathId(p))
          .flatMap((id) => {
            const message = forwarded.rejected[id] ?? forwarded.refusal;
            return message ? [[id, { message }]] : [];
          }),
      )
    : proxied.rejected;
  const after = new Map<string, Endpoint>();
  if (realisation === "proxy" && plan !== undefined) {
    if (plan === "unknown") {
      for (const c of admitted) after.set(c.id, { host, port: "unknown" });
    } else {
      const placed = admitted.filter((c) => plan.assignments[listenerKey(c)] !== undefined);
      const eps = consumerEndpoints(placed, plan.assignments, host);
      for (const [id, e] of Object.entries(eps)) after.set(id, { host: e.hostForConsumer, port: e.port });
    }
  } else if (forwarded) {
    // Forwarded: consumers dial the forwarder the group's plan gives each connection.
    for (const [id, e] of Object.entries(forwarded.endpoints))
      after.set(id, { host: e.hostForConsumer, port: e.port });
  } else if (realisation !== "proxy") {
    // Routed: consumers dial the instance itself.
    for (const p of g.after) after.set(pathId(p), { host: p.spec.instanceHost, port: p.spec.port });
  }
  ambiguousNewPorts(g, after);
  const groupHops = (id: string): Hop[] =>
    steps
      .filter((s) => !s.name.startsWith("probe-") || s.name === `probe-${id}`)
      .map((s) => toHop(s, s === portsStep ? portsDetail(s) : undefined));
  const connections: ConnectionInput[] = [];
  const label = new Map(g.added.map((c) => [pendingId(c), pendingLabel(c)]));
  for (const p of g.after) {
    const id = pathId(p);
    const before = g.before.find((b) => pathId(b) === id);
    const beforeEndpoint: Endpoint | undefined =
      before?.status?.hostForConsumer && typeof before.status.port === "number"
        ? { host: before.status.hostForConsumer, port: before.status.port }
        : undefined;
    const broken: string[] = [];
    if (rejected[id]) broken.push(`the bridge refuses it: ${rejected[id].message}`);
    else if (plan !== undefined && plan !== "unknown" && !after.has(id))
      broken.push(`no port left in ${range.from}-${range.to}: the proxy leaves it out`);
    const afterEndpoint = after.get(id);
    connections.push({
      id: label.get(id) ?? id,
      // A path that exists but was never realised is new to its consumers.
      change: before && beforeEndpoint ? "keep" : "add",
      implementation,
      consumer: { namespace },
      instance: { host: p.spec.instanceHost, port: p.spec.port },
      ...(beforeEndpoint ? { before: beforeEndpoint } : {}),
      ...(afterEndpoint ? { after: afterEndpoint } : {}),
      hops: groupHops(id),
      ...(broken.length > 0 ? { broken } : {}),
    });
  }
  for (const p of g.before.filter((b) => g.deletedIds.has(pathId(b)))) {
    const ep =
      p.status?.hostForConsumer && typeof p.status.port === "number"
        ? { host: p.status.hostForConsumer, port: p.status.port }
        : undefined;
    connections.push({
      id: pathId(p),
      change: "delete",
      implementation,
      consumer: { namespace },
      instance: { host: p.spec.instanceHost, port: p.spec.port },
      ...(ep ? { before: ep } : {}),
      hops: groupHops(pathId(p)),
    });
  }
  let ports: PortGroupInput | undefined;
  if (realisation === "proxy") {
    const before = (portsStep?.oldOutputs?.assignments ?? {}) as Record<string, number>;
    const oldRange = portsStep?.oldOutputs?.range as PortRange | undefined;
    ports = {
      group: g.key,
      ...(oldRange ? { rangeBefore: oldRange } : {}),
      rangeAfter: range,
      before: relabel(before, label),
      after: plan === undefined ? {} : plan === "unknown" ? "unknown" : relabel(plan.assignments, label),
      // TcpProxy keeps its stats and health ports outside the range; the local proxy inside it.
      ownPorts: target.kind === "local" ? LOCAL_OWN_LISTENERS.length : 0,
      ...(plan && plan !== "unknown" && plan.unplaced.length > 0
        ? { unplaced: plan.unplaced.map((u) => label.get(u) ?? u) }
        : {}),
    };
  }
  return { connections, ...(ports ? { ports } : {}) };
}

function relabel(m: Record<string, number>, label: Map<string, string>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [label.get(k) ?? k, v]));
}

function portsDetail(s: ResourceStep): string | undefined {
  const o = s.oldOutputs?.range as PortRange | undefined;
  const n = s.newInputs?.range as PortRange | undefined;
  if (o && n && (o.from !== n.from || o.to !== n.to)) return `range ${o.from}-${o.to} → ${n.from}-${n.to}`;
  return undefined;
}

const isEngineUnknown = (v: unknown): boolean =>
  v === ENGINE_UNKNOWN ||
  (Array.isArray(v) && v.some(isEngineUnknown)) ||
  (typeof v === "object" && v !== null && Object.values(v).some(isEngineUnknown));

/**
 * The PortAllocation's assignments after `up`: what its provider's create or update will
 * compute (network/proxy/port-allocation.ts), from the inputs and old state of this preview.
 */
export function predictPorts(
  step: ResourceStep | undefined,
): { assignments: Record<string, number>; unplaced: string[] } | "unknown" {
  if (!step) return "unknown";
  const outs = step.oldOutputs ?? {};
  if (step.op === "same") {
    return {
      assignments: (outs.assignments ?? {}) as Record<string, number>,
      unplaced: (outs.unplaced ?? []) as string[],
    };
  }
  const n = step.newInputs;
  if (!n || isEngineUnknown(n.range) || isEngineUnknown(n.ids) || isEngineUnknown(n.reserved))
    return "unknown";
  const common = {
    range: n.range as PortRange,
    ids: n.ids as string[],
    reserved: (n.reserved ?? []) as number[],
    ...(n.overflow ? { overflow: n.overflow as "error" | "leave-out" } : {}),
    ...(n.required ? { required: n.required as string[] } : {}),
  };
  if (step.op === "create" || step.op === "replace") {
    const seed = n.seed && !isEngineUnknown(n.seed) ? (n.seed as Record<string, number>) : undefined;
    const plan = planPorts({ ...common, ...(seed ? { previous: seed } : {}) });
    return { assignments: plan.assignments, unplaced: plan.unplaced };
  }
  const plan = planPorts({
    ...common,
    previous: (outs.assignments ?? {}) as Record<string, number>,
    released: (outs.released ?? []) as ReleasedPort[],
  });
  return { assignments: plan.assignments, unplaced: plan.unplaced };
}

/**
 * New paths get ports in the order of their NetworkPath names, which Crossplane makes from
 * the claim name plus random suffixes. Claims whose names are not a prefix of one another
 * sort as their names do, so the plan holds; otherwise only the set of ports is known.
 */
function ambiguousNewPorts(g: GroupPlan, after: Map<string, Endpoint>): void {
  const names = g.added.map((c) => c.name);
  const ambiguous = g.added.filter((c) =>
    names.some((n) => n !== c.name && (n.startsWith(`${c.name}-`) || c.name.startsWith(`${n}-`))),
  );
  if (ambiguous.length < 2) return;
  const candidates = ambiguous
    .map((c) => after.get(pendingId(c))?.port)
    .filter((p): p is number => typeof p === "number")
    .sort((a, b) => a - b);
  for (const c of ambiguous) {
    const e = after.get(pendingId(c));
    if (e) after.set(pendingId(c), { host: e.host, port: "unknown", candidates });
  }
}

/** Everything a connections preview gathers, ready for buildReport. */
export async function previewConnections(opts: {
  bridge: BridgeView;
  view: ControlPlaneView;
  claims: ClaimChange[];
  includePending: boolean;
  includeAll?: boolean;
  /** Consumer namespaces an environment change removes, or reaches at all. */
  namespaces?: { removed?: readonly string[]; affected?: readonly string[] };
  sources: PreviewInput["sources"];
  progress: (line: string) => void;
}): Promise<PreviewInput> {
  const groups = planGroups(opts.view, opts.claims, opts.includePending, opts.includeAll, opts.namespaces);
  const input: PreviewInput = { sources: opts.sources, connections: [], ports: [], notes: [] };
  for (const g of groups) {
    const r = await previewGroup(opts.bridge, g, opts.progress);
    input.connections.push(...r.connections);
    if (r.ports) input.ports?.push(r.ports);
    input.notes?.push(...r.notes);
  }
  if (groups.length === 0) input.notes?.push("no connection changes: nothing pending and no claims given");
  return input;
}
