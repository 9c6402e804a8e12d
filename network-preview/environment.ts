import type { PreviewInput } from "../lib/network-preview/model";
import type { ExposureRule, Hop } from "../lib/network-preview/schema";
import {
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  parseBridgeSettings,
  type BridgeSettings,
} from "../lib/bridge/settings";
import { StepCollector, toHop, type ResourceStep } from "./engine-events";

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
const SETTINGS = /kubernetes:core\/v1:ConfigMap/;

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

function settingsRanges(settings: BridgeSettings | undefined): string | undefined {
  if (!settings) return undefined;
  const ranges = Object.entries(settings.consumers)
    .filter(([, c]) => c.proxy)
    .map(([ns, c]) => `${ns} ${c.proxy?.portRange.from}-${c.proxy?.portRange.to}`);
  return ranges.length > 0 ? ranges.sort().join(", ") : "no proxy port ranges";
}

/** Who may reach each consumer's proxy (its Service's source ranges), as exposure rules. */
function proxyRules(settings: BridgeSettings | undefined, via: string): ExposureRule[] {
  if (!settings) return [];
  return Object.entries(settings.consumers).flatMap(([ns, c]) =>
    (c.proxy?.exposure?.sourceRanges ?? []).map((source) => ({
      source,
      destination: `proxy of ${ns}`,
      protocol: "tcp" as const,
      ports: c.proxy?.portRange ?? { from: 1, to: 65535 },
      via,
    })),
  );
}

/** The report's input from the environment stack's preview steps. */
export function environmentInput(stack: string, steps: ResourceStep[]): PreviewInput {
  const before: ExposureRule[] = [];
  const after: ExposureRule[] = [];
  const otherChanges: Hop[] = [];
  const notes: string[] = [];
  for (const s of steps) {
    const isSettings = SETTINGS.test(s.type) && s.name.includes(SETTINGS_CONFIGMAP);
    const oldSettings = isSettings && s.op !== "create" ? settingsOf(s.oldInputs) : undefined;
    const newSettings = isSettings && s.op !== "delete" ? settingsOf(s.newInputs) : undefined;
    before.push(...proxyRules(oldSettings, s.urn));
    after.push(...proxyRules(newSettings, s.urn));
    const b = s.op === "create" ? undefined : ruleOf(s, s.oldInputs);
    const a = s.op === "delete" ? undefined : ruleOf(s, s.newInputs);
    if (b) before.push(b);
    if (a) after.push(a);
    if (s.op === "same" || s.op === "read" || s.op === "refresh") continue;
    if (s.type === APP_CLUSTER) {
      otherChanges.push({
        ...toHop(
          s,
          `app cluster ${s.name} ${s.op === "create" ? "added" : s.op === "delete" ? "removed" : "changed"}`,
        ),
        kind: "app-cluster",
      });
      continue;
    }
    if (isSettings) {
      const o = settingsRanges(oldSettings);
      const n = settingsRanges(newSettings);
      const detail = o !== n ? `proxy port ranges ${o ?? "none"} → ${n ?? "unknown"}` : undefined;
      otherChanges.push({ ...toHop(s, detail), kind: "proxy-settings" });
      if (detail)
        notes.push(
          `${detail}: proxy endpoints may move; preview them with \`--kubeconfig <control plane> --all-groups\``,
        );
      continue;
    }
    const hop = toHop(s, b && a && b.source !== a.source ? `${b.source} → ${a.source}` : undefined);
    if (hop.kind !== "other") otherChanges.push(hop);
  }
  return {
    sources: [{ kind: "environment", ref: stack }],
    connections: [],
    otherChanges,
    exposure: { before, after },
    notes,
  };
}

/** Runs the real engine preview of the environment stack and gathers its steps. */
export async function previewEnvironment(
  stack: string,
  progress: (line: string) => void,
): Promise<PreviewInput> {
  // Loaded here: the program pulls in every cloud SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { selectStack } = require("../tooling/pulumi-runner") as typeof import("../tooling/pulumi-runner");
  const s = await selectStack({ stack });
  const collector = new StepCollector(progress);
  progress(`previewing the environment stack ${stack}`);
  await s.preview({ onEvent: collector.onEvent, diff: true, color: "never" });
  return environmentInput(stack, collector.all());
}
