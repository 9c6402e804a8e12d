import { isIPv4 } from "node:net";
import type { Stack } from "@pulumi/pulumi/automation";
import { estimateCost } from "../../lib/network-preview/cost";
import type { ConnectionInput, EnvironmentEffect, PreviewInput } from "../../lib/network-preview/model";
import type { ExposureRule, Hop } from "../../lib/network-preview/schema";
import {
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  SETTINGS_NAMESPACE,
  type BridgeSettings,
} from "../../lib/bridge/settings";
import { addressInCidr } from "../../lib/net/cidr";
import { parseBridgeSettings } from "../../network/group-settings";
import type { Exposure } from "../../network/contract/exposure";
import type { PortRange } from "../../lib/net/port-range";
import { realisationOf } from "../../network/registry";
import { StepCollector } from "./engine-events";
import { toHop, type ResourceStep } from "./plan/steps";

/**
 * Source 1: the environment stack. A real engine preview (`preview` with `onEvent`, detailed
 * diffs) of its current config, summarised as the network sees it: security group rules
 * (exposure before and after), peering and OpenStack routes, WireGuard peers, the bridge's
 * proxy settings, app clusters added or removed. Connections themselves are the bridge's:
 * a proxy settings change says which way to preview them (`--all-groups --port-range`).
 */

const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const str = (v: unknown): string | undefined =>
  typeof v === "string" && v !== UNKNOWN_VALUE ? v : undefined;
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

/** The ingress a security group rule grants, from one side of its diff (AWS or OpenStack inputs). */
export function ruleOf(
  step: ResourceStep,
  inputs: Record<string, unknown> | undefined,
): ExposureRule | undefined {
  if (!inputs) return undefined;
  const aws = step.type === "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
  const os = step.type === "openstack:networking/secGroupRule:SecGroupRule";
  if (!aws && !os) return undefined;
  if (os && inputs.direction !== "ingress") return undefined;
  const source = str(aws ? inputs.cidrIpv4 : inputs.remoteIpPrefix) ?? "unknown";
  const protocolRaw = str(aws ? inputs.ipProtocol : inputs.protocol) ?? "all";
  const protocol = protocolRaw === "tcp" || protocolRaw === "udp" ? protocolRaw : "all";
  const from = num(aws ? inputs.fromPort : inputs.portRangeMin) ?? 1;
  const to = num(aws ? inputs.toPort : inputs.portRangeMax) ?? 65535;
  // A group created in the same run has no id yet: it is named by the rule's parent instead.
  const destination = str(inputs.securityGroupId) ?? `new group of ${step.name}`;
  return { source, destination, protocol, ports: { from, to }, via: step.urn };
}

const APP_CLUSTER = "klutch:bind:AppClusterBinding";

/**
 * The bridge settings ConfigMap (components/bridge/bridge-settings.ts): a ConfigMap named
 * SETTINGS_CONFIGMAP in the settings namespace, whatever the Pulumi resource is called.
 */
function isSettingsStep(s: ResourceStep): boolean {
  if (s.type !== "kubernetes:core/v1:ConfigMap") return false;
  const meta = (i: Record<string, unknown> | undefined) => (i?.metadata ?? {}) as Record<string, unknown>;
  return [s.newInputs, s.oldInputs].some(
    (i) => meta(i).name === SETTINGS_CONFIGMAP && meta(i).namespace === SETTINGS_NAMESPACE,
  );
}

function settingsOf(inputs: Record<string, unknown> | undefined): BridgeSettings | undefined {
  const data = (inputs?.data ?? {}) as Record<string, unknown>;
  const text = str(data[SETTINGS_KEY]);
  if (!text) return undefined;
  try {
    return parseBridgeSettings(text);
  } catch {
    return undefined;
  }
}

/**
 * The settings of a consumer's implementations that say which ports whom they admit (the
 * proxy's: a port range and an exposure), by implementation; checked by parseBridgeSettings
 * with each implementation's schema, so only the shape is read here.
 */
function exposedSettings(
  c: BridgeSettings["consumers"][string],
): [string, { portRange: PortRange; exposure?: Exposure }][] {
  return Object.entries(c).flatMap(([implementation, v]) => {
    const settings = v as { portRange?: PortRange; exposure?: Exposure } | undefined;
    return settings?.portRange ? [[implementation, { ...settings, portRange: settings.portRange }]] : [];
  });
}

function settingsRanges(settings: BridgeSettings | undefined): string | undefined {
  if (!settings) return undefined;
  const ranges = Object.entries(settings.consumers).flatMap(([ns, c]) =>
    exposedSettings(c).map(([impl, e]) => `${ns} ${impl} ${e.portRange.from}-${e.portRange.to}`),
  );
  return ranges.length > 0 ? ranges.sort().join(", ") : "no port ranges";
}

/** Who may reach each consumer's implementation (its Service's source ranges), as exposure rules. */
function exposureRules(settings: BridgeSettings | undefined, via: string): ExposureRule[] {
  if (!settings) return [];
  return Object.entries(settings.consumers).flatMap(([ns, c]) =>
    exposedSettings(c).flatMap(([impl, e]) =>
      (e.exposure?.sourceRanges ?? []).map((source) => ({
        source,
        destination: `${impl} of ${ns}`,
        protocol: "tcp" as const,
        ports: e.portRange,
        via,
      })),
    ),
  );
}

/** The consumer namespace an AppClusterBinding makes on the control plane (its child Namespace). */
const CONSUMER_NAMESPACE = `${APP_CLUSTER}$kubernetes:core/v1:Namespace`;

function namespaceOf(inputs: Record<string, unknown> | undefined): string | undefined {
  return str((inputs?.metadata as Record<string, unknown> | undefined)?.name);
}

function appClusterOf(inputs: Record<string, unknown> | undefined): string | undefined {
  const labels = (inputs?.metadata as { labels?: Record<string, unknown> } | undefined)?.labels;
  return str(labels?.["klutch.anynines.com/app-cluster"]);
}

/**
 * What a settings change does to each consumer namespace's connections: its connector settings
 * removed, its implementation changed, or its implementation's settings changed. The bridge's kubernetes
 * target builds each group from these; what that does to an endpoint is not planned here.
 */
export function settingsEffects(
  oldSettings: BridgeSettings | undefined,
  newSettings: BridgeSettings | undefined,
  hop: Hop,
): EnvironmentEffect[] {
  if (!oldSettings || !newSettings) return [];
  const out: EnvironmentEffect[] = [];
  for (const [namespace, was] of Object.entries(oldSettings.consumers).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const now = newSettings.consumers[namespace];
    const base = { namespace, appCluster: was.appCluster, effect: "changed" as const, hop };
    if (!now) {
      out.push({
        ...base,
        why: `app cluster ${was.appCluster}'s connector settings are removed from the bridge settings`,
      });
    } else if (now.implementation !== was.implementation) {
      out.push({
        ...base,
        why: `app cluster ${was.appCluster}'s connector changes ${was.implementation} → ${now.implementation}: every connection it consumes is realised anew`,
      });
    } else if (JSON.stringify(now[now.implementation]) !== JSON.stringify(was[was.implementation])) {
      out.push({
        ...base,
        why: `app cluster ${was.appCluster}'s ${now.implementation} settings change (${settingsChange(was[was.implementation], now[now.implementation])})`,
      });
    }
  }
  return out;
}

/** Which of an implementation's settings change, each field before → after where it is short. */
function settingsChange(a: unknown, b: unknown): string {
  const was = (a ?? {}) as Record<string, unknown>;
  const now = (b ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of [...new Set([...Object.keys(was), ...Object.keys(now)])].sort()) {
    if (JSON.stringify(was[key]) === JSON.stringify(now[key])) continue;
    const shown = [was[key], now[key]].map(shortValue);
    parts.push(shown.every((v) => v !== undefined) ? `${key} ${shown[0]} → ${shown[1]}` : key);
  }
  return parts.join(", ") || "other fields";
}

/** A value as one short word (a range as from-to), or undefined when it is not short. */
function shortValue(v: unknown): string | undefined {
  if (v === undefined) return "none";
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v !== "object" || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (Object.keys(r).length === 2 && typeof r.from === "number" && typeof r.to === "number")
    return `${r.from}-${r.to}`;
  return undefined;
}

/** App cluster → its consumer namespace, from the bridge settings on either side of the change. */
export function consumerNamespaces(steps: readonly ResourceStep[]): Map<string, string> {
  const namespaces = new Map<string, string>();
  for (const s of steps.filter(isSettingsStep)) {
    for (const side of [s.oldInputs, s.newInputs]) {
      for (const [ns, c] of Object.entries(settingsOf(side)?.consumers ?? {}))
        namespaces.set(c.appCluster, ns);
    }
  }
  return namespaces;
}

/** The report's input from the environment stack's preview steps. */
export function environmentInput(stack: string, steps: ResourceStep[]): PreviewInput {
  const before: ExposureRule[] = [];
  const after: ExposureRule[] = [];
  const otherChanges: Hop[] = [];
  const effects: EnvironmentEffect[] = [];
  const notes: string[] = [];
  const namespaces = consumerNamespaces(steps);
  for (const s of steps) {
    const isSettings = isSettingsStep(s);
    const oldSettings = isSettings && s.op !== "create" ? settingsOf(s.oldInputs) : undefined;
    const newSettings = isSettings && s.op !== "delete" ? settingsOf(s.newInputs) : undefined;
    if (s.urn.includes(`${CONSUMER_NAMESPACE}::`) && (s.op === "delete" || s.op === "replace")) {
      const namespace = namespaceOf(s.oldInputs);
      const appCluster = appClusterOf(s.oldInputs);
      if (namespace) {
        effects.push({
          namespace,
          ...(appCluster ? { appCluster } : {}),
          effect: "removed",
          hop: {
            ...toHop(s, `consumer namespace ${namespace} ${s.op === "delete" ? "deleted" : "re-created"}`),
            kind: "app-cluster",
          },
          why: `app cluster ${appCluster ?? "?"} ${s.op === "delete" ? "is removed" : "is re-bound"}: its consumer namespace ${namespace} is deleted, and every TCPConnection in it`,
        });
        continue;
      }
    }
    before.push(...exposureRules(oldSettings, s.urn));
    after.push(...exposureRules(newSettings, s.urn));
    const b = s.op === "create" ? undefined : ruleOf(s, s.oldInputs);
    const a = s.op === "delete" ? undefined : ruleOf(s, s.newInputs);
    if (b) before.push(b);
    if (a) after.push(a);
    if (s.op === "same" || s.op === "read" || s.op === "refresh") continue;
    if (s.urn.includes(`${APP_CLUSTER}$`)) {
      // What binding an app cluster makes (konnector, identities, namespace): one app cluster's change.
      otherChanges.push({ ...toHop(s), kind: "app-cluster" });
      continue;
    }
    if (s.type === APP_CLUSTER) {
      otherChanges.push({
        ...toHop(
          s,
          `app cluster binding ${s.name} ${s.op === "create" ? "added" : s.op === "delete" ? "removed" : "changed"}`,
        ),
        kind: "app-cluster",
      });
      continue;
    }
    if (isSettings) {
      const o = settingsRanges(oldSettings);
      const n = settingsRanges(newSettings);
      const detail = o !== n ? `port ranges ${o ?? "none"} → ${n ?? "unknown"}` : undefined;
      const hop: Hop = { ...toHop(s, detail), kind: "proxy-settings" };
      otherChanges.push(hop);
      effects.push(...settingsEffects(oldSettings, newSettings, hop));
      if (detail)
        notes.push(
          `${detail}: endpoints may move; preview them with \`--kubeconfig <control plane> --all-groups\``,
        );
      continue;
    }
    const hop = toHop(s, b && a && b.source !== a.source ? `${b.source} → ${a.source}` : undefined);
    if (hop.kind !== "other") otherChanges.push(hop);
  }
  effects.push(...pathHopEffects(otherChanges, namespaces));
  return {
    sources: [{ kind: "environment", ref: stack }],
    connections: [],
    otherChanges,
    effects,
    exposure: { before, after },
    cost: estimateCost(steps),
    notes,
  };
}

/** Resource names of one app cluster's path resources: `<environment>-<app cluster>-…`. */
function namedAfter(appCluster: string): RegExp {
  return new RegExp(`(^|-)${appCluster.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-`);
}

const PATH_HOPS = new Set<Hop["kind"]>([
  "peering-route",
  "security-group-rule",
  "openstack-route",
  "wireguard-peer",
]);

/**
 * The network hops an app cluster's connections run through: the environment names each app
 * cluster's resources `<environment>-<app cluster>-…` (network/aws-vpc-peering/environment.ts,
 * network/openstack/environment.ts, network/wireguard/environment.ts), so a changed route,
 * rule or peer whose name holds the app cluster's reaches every connection it consumes.
 */
export function pathHopEffects(
  hops: readonly Hop[],
  namespaces: ReadonlyMap<string, string>,
): EnvironmentEffect[] {
  const out: EnvironmentEffect[] = [];
  for (const hop of hops.filter((h) => PATH_HOPS.has(h.kind))) {
    const name = hop.urn.slice(hop.urn.lastIndexOf("::") + 2);
    for (const [appCluster, namespace] of namespaces) {
      if (!namedAfter(appCluster).test(name)) continue;
      const interrupts = hop.op === "replace" && hop.deleteBeforeReplace === true;
      out.push({
        namespace,
        appCluster,
        effect: "changed",
        hop,
        ...(interrupts ? { risk: "interruption" as const } : {}),
        why: interrupts
          ? `${hop.kind} ${name} of app cluster ${appCluster} is replaced, deleting first (${(hop.replaceReasons ?? []).join(", ") || "replace"}): traffic stops meanwhile`
          : `${hop.kind} ${name} of app cluster ${appCluster} is ${hop.op === "create" ? "created" : hop.op === "delete" ? "deleted" : "changed"}${hop.detail ? ` (${hop.detail})` : ""}`,
      });
    }
  }
  return out;
}

/** Consumer namespaces whose every connection the environment change deletes. */
export function removedNamespaces(input: PreviewInput): string[] {
  return [
    ...new Set((input.effects ?? []).filter((e) => e.effect === "removed").map((e) => e.namespace)),
  ].sort();
}

/** Consumer namespaces whose connections the environment change reaches at all. */
export function affectedNamespaces(input: PreviewInput): string[] {
  return [...new Set((input.effects ?? []).map((e) => e.namespace))].sort();
}

/** The policy pack this project ships (`npm run pulumi -- preview --policy-pack programs/policy`). */
export const POLICY_PACK_DIR = "programs/policy";

/**
 * Runs the real engine preview of the environment stack, with the project's CrossGuard pack
 * on the planned state, and gathers its steps and the pack's findings. A mandatory violation
 * fails the engine's preview; its findings are the report's, so that failure is not an error
 * here (any other failure is).
 */
export async function previewEnvironment(
  stack: string,
  progress: (line: string) => void,
  opts: { stack?: Stack; policyPacks?: string[] } = {},
): Promise<PreviewInput & { plannedSettings?: BridgeSettings; reach: RoutedReach[] }> {
  // Loaded here: the program pulls in every cloud SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const runner = require("../stack/program-stack") as typeof import("../stack/program-stack");
  const { repoRoot } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require("../../host/automation/toolchain") as typeof import("../../host/automation/toolchain");
  const { policyPackHost } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require("../../host/automation/policy-host") as typeof import("../../host/automation/policy-host");
  // Each pack as its launcher: the toolchain's CLI cannot start a pack directory (policy-host.ts).
  const packs = (opts.policyPacks ?? [`${repoRoot}/${POLICY_PACK_DIR}`]).map((dir) => policyPackHost(dir));
  const s = opts.stack ?? (await runner.selectStack({ stack }));
  const collector = new StepCollector(progress);
  progress(`previewing the environment stack ${stack}${packs.length > 0 ? " with the policy pack" : ""}`);
  try {
    await s.preview({ onEvent: collector.onEvent, diff: true, color: "never", policyPacks: packs });
  } catch (e) {
    if (!collector.policy.some((p) => p.enforcement === "mandatory")) throw e;
    progress("  the engine refuses the planned state: mandatory policy violations (reported below)");
  }
  const steps = collector.all();
  const input = environmentInput(stack, steps);
  return {
    ...input,
    notes: [...(input.notes ?? []), ...collector.unreadable],
    policy: collector.policy,
    plannedSettings: plannedSettings(steps),
    reach: routedReach(steps, consumerNamespaces(steps)),
  };
}

/**
 * The bridge settings the environment change leaves in place (what the settings ConfigMap
 * will hold after `up`), when the preview changes them and knows them: the bridge's kubernetes
 * target builds each group from these, so a preview of its groups uses them.
 */
export function plannedSettings(steps: readonly ResourceStep[]): BridgeSettings | undefined {
  const s = steps.find((x) => isSettingsStep(x) && x.op !== "same" && x.op !== "delete");
  return s ? settingsOf(s.newInputs) : undefined;
}

/**
 * The app side's routes towards the data services, by their names: a VpcPeering's requester
 * (the app cluster) routes are `<peering>-requester-<table>-<cidr>` (peering-plan.ts), an
 * OpenstackRoutedPath's app router route is `<path>-route` (routed-path.ts). The accepter's
 * routes lead back to the app cluster and say nothing about reaching an instance.
 */
const APP_SIDE_ROUTE = /-requester-|-route$/;

/** The components whose security group rules and routes are a routed app cluster's path. */
const ROUTED_PATH = /klutch:network:(VpcPeering|OpenstackRoutedPath)\$/;

/**
 * What a routed app cluster's path reaches once the change is applied: the TCP ports its
 * security group rules admit and the networks its routes lead to (network/aws-vpc-peering,
 * network/openstack: one ingress rule per data-service port, routes to the data-service
 * network). Its resources are named after it (`<environment>-<app cluster>-…`).
 */
export interface RoutedReach {
  appCluster: string;
  namespace: string;
  ports: { from: number; to: number }[];
  /** Destinations of its routes; empty when the plan has none to judge by. */
  routes: string[];
}

export function routedReach(
  steps: readonly ResourceStep[],
  namespaces: ReadonlyMap<string, string>,
): RoutedReach[] {
  const out: RoutedReach[] = [];
  for (const [appCluster, namespace] of namespaces) {
    const own = namedAfter(appCluster);
    const mine = steps.filter((s) => ROUTED_PATH.test(s.urn) && own.test(s.name) && s.op !== "delete");
    if (mine.length === 0) continue;
    const ports = mine.flatMap((s) => {
      const r = ruleOf(s, s.newInputs);
      return r && r.protocol !== "udp" ? [r.ports] : [];
    });
    const routes = mine.flatMap((s) => {
      const d = s.newInputs?.destinationCidrBlock ?? s.newInputs?.destinationCidr;
      return APP_SIDE_ROUTE.test(s.name) && typeof d === "string" && d !== UNKNOWN_VALUE ? [d] : [];
    });
    out.push({ appCluster, namespace, ports, routes });
  }
  return out;
}

/**
 * Why the planned state no longer reaches a routed connection's instance: no rule admits its
 * port, or no route leads to its host. Consumers dial the instance itself on a routed path, so
 * either leaves the connection broken after `up`.
 */
export function unreachableReasons(
  c: { consumer: { namespace: string }; instance: { host: string; port: number } },
  reach: readonly RoutedReach[],
): string[] {
  const r = reach.find((x) => x.namespace === c.consumer.namespace);
  if (!r) return [];
  const reasons: string[] = [];
  const { host, port } = c.instance;
  if (!r.ports.some((p) => p.from <= port && port <= p.to)) {
    const admitted = r.ports.map((p) => (p.from === p.to ? `${p.from}` : `${p.from}-${p.to}`)).join(", ");
    reasons.push(
      `no planned security group rule of app cluster ${r.appCluster} admits TCP ${port} (${admitted ? `it admits ${admitted}` : "it admits none"}): add ${port} to its networkConnector.dataServicePorts`,
    );
  }
  if (r.routes.length > 0 && isIPv4(host) && !r.routes.some((cidr) => addressInCidr(host, cidr))) {
    reasons.push(
      `no planned route of app cluster ${r.appCluster} leads to ${host} (its routes lead to ${r.routes.join(", ")})`,
    );
  }
  return reasons;
}

/** The connections, each routed one marked broken where the planned state no longer reaches it. */
export function markUnreachable(
  connections: readonly ConnectionInput[],
  reach: readonly RoutedReach[],
): ConnectionInput[] {
  return connections.map((c) => {
    if (c.change === "delete" || realisationOf(c.implementation) !== "routed") return c;
    const reasons = unreachableReasons(c, reach);
    return reasons.length > 0 ? { ...c, broken: [...(c.broken ?? []), ...reasons] } : c;
  });
}
