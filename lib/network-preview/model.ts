import { cidrInside, cidrProblem } from "../net/cidr";
import {
  RISKS,
  SCHEMA_VERSION,
  UNKNOWN,
  type BlastEntry,
  type ConnectionReport,
  type Endpoint,
  type ExposureDelta,
  type ExposureRule,
  type Grade,
  type Hop,
  type NetworkPreviewReport,
  type CostReport,
  type PolicyResult,
  type PortsReport,
  type Risk,
} from "./schema";

/**
 * The pure half of the network preview: from what the engine said (hops, endpoints before
 * and after, exposure rules, port assignments) to the report — risk per connection, what
 * widens, which ports move, the blast radius and the exit grade. Nothing here runs an
 * engine; programs/network-preview/ gathers the input from real previews.
 */

export interface ConnectionInput {
  id: string;
  change: ConnectionReport["change"];
  implementation: string;
  consumer: ConnectionReport["consumer"];
  instance: ConnectionReport["instance"];
  before?: Endpoint;
  after?: Endpoint;
  hops: Hop[];
  /** Why the planned state no longer reaches the instance (left out of the proxy, no route, …). */
  broken?: string[];
}

/**
 * An environment change that reaches every connection consumed in one namespace: an app
 * cluster removed (its consumer namespace, and every TCPConnection in it, is deleted), or its
 * connector settings changed or removed from the bridge settings. buildReport attaches the
 * hop to those connections, so it is counted in their risk and in the blast radius.
 */
export interface EnvironmentEffect {
  namespace: string;
  /** The app cluster that consumes in the namespace, when the environment names it. */
  appCluster?: string;
  effect: "removed" | "changed";
  hop: Hop;
  why: string;
  /** What a change does to those connections; unknown unless the hop says (a delete-first replace interrupts). */
  risk?: "interruption" | "unknown";
}

export interface PortGroupInput {
  group: string;
  rangeBefore?: { from: number; to: number };
  rangeAfter: { from: number; to: number };
  /** Listener → port before (the stack's state); empty for a new group. */
  before: Record<string, number>;
  /** Listener → port after (the planner's answer), or unknown. */
  after: Record<string, number> | typeof UNKNOWN;
  /** Ports of the range the proxy keeps for itself (stats, health): they count as used. */
  ownPorts: number;
  unplaced?: string[];
}

export interface PreviewInput {
  sources: NetworkPreviewReport["sources"];
  connections: ConnectionInput[];
  otherChanges?: Hop[];
  effects?: EnvironmentEffect[];
  exposure?: { before: ExposureRule[]; after: ExposureRule[] };
  ports?: PortGroupInput[];
  policy?: PolicyResult[];
  /** The cost estimate of the environment stack's changes (none without --stack). */
  cost?: CostReport;
  notes?: string[];
}

/** Several sources' inputs as one (the environment stack and the connection changes). */
export function mergeInputs(inputs: readonly PreviewInput[]): PreviewInput {
  return {
    sources: inputs.flatMap((i) => i.sources),
    connections: inputs.flatMap((i) => i.connections),
    otherChanges: inputs.flatMap((i) => i.otherChanges ?? []),
    effects: inputs.flatMap((i) => i.effects ?? []),
    exposure: {
      before: inputs.flatMap((i) => i.exposure?.before ?? []),
      after: inputs.flatMap((i) => i.exposure?.after ?? []),
    },
    ports: inputs.flatMap((i) => i.ports ?? []),
    policy: inputs.flatMap((i) => i.policy ?? []),
    ...costOf(inputs),
    notes: inputs.flatMap((i) => i.notes ?? []),
  };
}

/** The one cost estimate among the inputs (only the environment stack's has one). */
function costOf(inputs: readonly PreviewInput[]): { cost?: CostReport } {
  const cost = inputs.find((i) => i.cost)?.cost;
  return cost ? { cost } : {};
}

const SEVERITY: Record<Risk, number> = {
  none: 0,
  added: 1,
  removed: 1,
  unknown: 2,
  "endpoint-changed": 3,
  interruption: 4,
  broken: 5,
};

/** The exit grade of each risk: 3 safe, 4 consumers must act or traffic stops a while, 5 broken. */
const GRADE: Record<Risk, Grade> = {
  none: 0,
  added: 3,
  removed: 3,
  // Unknown is graded with the endpoint changes: nobody can show it is safe.
  unknown: 4,
  "endpoint-changed": 4,
  interruption: 4,
  broken: 5,
};

export function worstRisk(risks: readonly Risk[]): Risk {
  return risks.reduce<Risk>((w, r) => (SEVERITY[r] > SEVERITY[w] ? r : w), "none");
}

const known = (e: Endpoint | undefined): e is Endpoint & { port: number } =>
  e !== undefined && e.port !== UNKNOWN && e.host !== UNKNOWN;

export function endpointText(e: Endpoint | undefined): string {
  if (!e) return "—";
  if (e.port === UNKNOWN && e.candidates?.length) return `${e.host}:{${e.candidates.join(",")}}`;
  return `${e.host}:${e.port}`;
}

/** A hop operation that stops traffic for a while: a replacement that deletes first. */
export function interrupts(hop: Hop): boolean {
  return hop.op === "replace" && hop.deleteBeforeReplace === true;
}

/** The risk of one connection, and why, in words an ops engineer can act on. */
export function classify(
  c: ConnectionInput,
  effects: readonly EnvironmentEffect[] = [],
): { risk: Risk; reasons: string[] } {
  const removedBy = effects.filter((e) => e.effect === "removed").map((e) => e.why);
  if (c.change === "delete" || removedBy.length > 0)
    return { risk: "removed", reasons: removedBy.length > 0 ? removedBy : ["the connection is deleted"] };
  if (c.broken && c.broken.length > 0) return { risk: "broken", reasons: [...c.broken] };
  if (c.change === "add") {
    const reasons = [`new endpoint ${endpointText(c.after)}`];
    if (!known(c.after)) reasons.push("the endpoint is known only after `up`");
    return { risk: "added", reasons };
  }
  const reasons: string[] = [];
  let risk: Risk = "none";
  const raise = (r: Risk, why: string) => {
    reasons.push(why);
    if (SEVERITY[r] > SEVERITY[risk]) risk = r;
  };
  if (known(c.before) && known(c.after)) {
    if (c.before.host !== c.after.host || c.before.port !== c.after.port) {
      raise(
        "endpoint-changed",
        `endpoint moves ${endpointText(c.before)} → ${endpointText(c.after)}: consumers must reconfigure`,
      );
    }
  } else if (c.after && !known(c.after)) {
    raise("unknown", `the endpoint after the change is known only after \`up\` (${endpointText(c.after)})`);
  }
  for (const hop of c.hops.filter(interrupts)) {
    raise(
      "interruption",
      `${hop.type} is replaced, deleting first (${replaceWhy(hop)}): traffic stops meanwhile`,
    );
  }
  // A settings change the connection preview could not plan with: nobody can show it is safe.
  for (const e of effects) raise(e.risk ?? "unknown", e.why);
  return { risk, reasons };
}

function replaceWhy(hop: Hop): string {
  return hop.replaceReasons?.length ? `because ${hop.replaceReasons.join(", ")} changed` : "replace";
}

const ruleKey = (r: ExposureRule) =>
  `${r.source}|${r.destination}|${r.protocol}|${r.ports.from}-${r.ports.to}`;

/** Whether `outer` lets in everything `inner` does (source, destination, protocol and ports). */
export function ruleCovers(outer: ExposureRule, inner: ExposureRule): boolean {
  if (outer.destination !== inner.destination) return false;
  if (outer.protocol !== "all" && outer.protocol !== inner.protocol) return false;
  if (outer.ports.from > inner.ports.from || outer.ports.to < inner.ports.to) return false;
  if (cidrProblem(outer.source) || cidrProblem(inner.source)) return outer.source === inner.source;
  return cidrInside(inner.source, outer.source);
}

const PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8"];

function isPrivate(cidr: string): boolean {
  return !cidrProblem(cidr) && PRIVATE.some((p) => cidrInside(cidr, p));
}

/**
 * Added, removed and widened rules. A rule widens exposure when no rule before covered it
 * and either its destination was already exposed (the existing exposure grew, e.g. a /24
 * became a /16) or its source is not private (a new opening to the internet).
 */
export function exposureDelta(before: ExposureRule[], after: ExposureRule[]): ExposureDelta {
  const beforeKeys = new Set(before.map(ruleKey));
  const afterKeys = new Set(after.map(ruleKey));
  const added = after.filter((r) => !beforeKeys.has(ruleKey(r)));
  const removed = before.filter((r) => !afterKeys.has(ruleKey(r)));
  const widened: ExposureDelta["widened"] = [];
  const sourceIn = (inner: string, outer: string) =>
    cidrProblem(inner) || cidrProblem(outer) ? inner === outer : cidrInside(inner, outer);
  const portCount = (rules: ExposureRule[], dest: string, source: string) =>
    rules
      .filter((x) => x.destination === dest && sourceIn(source, x.source))
      .reduce((n, x) => n + x.ports.to - x.ports.from + 1, 0);
  for (const r of added) {
    if (before.some((b) => ruleCovers(b, r))) continue;
    const sameDestination = before.filter((b) => b.destination === r.destination);
    if (sameDestination.length > 0) {
      if (!sameDestination.some((b) => sourceIn(r.source, b.source))) {
        widened.push({
          ...r,
          why: `${r.source} is not inside what ${r.destination} allowed before (${sameDestination.map((b) => b.source).join(", ")})`,
        });
        continue;
      }
      // Same sources, other ports: a range that moves is no wider; one that grows is.
      const was = portCount(before, r.destination, r.source);
      const now = portCount(after, r.destination, r.source);
      if (now > was) {
        widened.push({ ...r, why: `${r.source} may reach ${now} ports of ${r.destination}, ${was} before` });
      }
    } else if (!isPrivate(r.source)) {
      widened.push({
        ...r,
        why: `${r.source} is not a private range: ${r.destination} opens to the internet`,
      });
    }
  }
  return { before, after, added, removed, widened };
}

/** Ports moved, handed out and freed per group, and what is left in each range. */
export function portsReport(groups: readonly PortGroupInput[]): PortsReport {
  const out: PortsReport = { groups: [], reassigned: [], allocated: [], freed: [], unplaced: [] };
  for (const g of [...groups].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0))) {
    const size = g.rangeAfter.to - g.rangeAfter.from + 1;
    if (g.after === UNKNOWN) {
      out.groups.push({
        group: g.group,
        ...(g.rangeBefore ? { rangeBefore: g.rangeBefore } : {}),
        rangeAfter: g.rangeAfter,
        used: Object.keys(g.before).length,
        headroom: UNKNOWN,
      });
      continue;
    }
    const after = g.after;
    for (const id of Object.keys(after).sort()) {
      const from = g.before[id];
      const to = after[id] as number;
      if (from === undefined) out.allocated.push({ group: g.group, id, port: to });
      else if (from !== to) out.reassigned.push({ group: g.group, id, from, to });
    }
    for (const id of Object.keys(g.before).sort()) {
      if (after[id] === undefined) out.freed.push({ group: g.group, id, port: g.before[id] as number });
    }
    for (const id of g.unplaced ?? []) out.unplaced.push({ group: g.group, id });
    const used = Object.keys(after).length;
    out.groups.push({
      group: g.group,
      ...(g.rangeBefore ? { rangeBefore: g.rangeBefore } : {}),
      rangeAfter: g.rangeAfter,
      used,
      // The proxy's own listeners are in `after` already when the planner placed them.
      headroom: Math.max(0, size - Math.max(used, g.ownPorts)),
    });
  }
  return out;
}

/** Each changed hop with the connections that depend on it, widest first. */
export function blastRadius(connections: readonly ConnectionReport[]): BlastEntry[] {
  const byUrn = new Map<string, { hop: Hop; conns: ConnectionReport[] }>();
  for (const c of connections) {
    for (const hop of c.hops) {
      if (hop.op === "same" || hop.op === "read" || hop.op === "refresh") continue;
      const entry = byUrn.get(hop.urn) ?? { hop, conns: [] };
      entry.conns.push(c);
      byUrn.set(hop.urn, entry);
    }
  }
  return [...byUrn.values()]
    .map(({ hop, conns }) => ({
      urn: hop.urn,
      kind: hop.kind,
      op: hop.op,
      connections: conns.length,
      namespaces: new Set(conns.map((c) => c.consumer.namespace)).size,
      clusters: new Set(conns.map((c) => c.consumer.cluster ?? "")).size,
      ids: conns.map((c) => c.id).sort(),
    }))
    .sort((a, b) => b.connections - a.connections || (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
}

const RISK_WORDS: Record<Risk, string> = {
  none: "unchanged",
  added: "added",
  removed: "removed",
  unknown: "unknown",
  "endpoint-changed": "endpoint changed",
  interruption: "interruption",
  broken: "broken",
};

export function riskWords(r: Risk): string {
  return RISK_WORDS[r];
}

/** Builds the report; deterministic for the same input (sorted everywhere). */
export function buildReport(input: PreviewInput): NetworkPreviewReport {
  const effects = input.effects ?? [];
  const linked = new Set<string>();
  const connections: ConnectionReport[] = [...input.connections]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((c) => {
      const mine = effects.filter((e) => e.namespace === c.consumer.namespace);
      for (const e of mine) linked.add(e.hop.urn);
      const { risk, reasons } = classify(c, mine);
      const cluster = c.consumer.cluster ?? mine.find((e) => e.appCluster)?.appCluster;
      const hops = [...mine.map((e) => e.hop), ...c.hops].filter(
        (h, i, all) => all.findIndex((x) => x.urn === h.urn) === i,
      );
      return {
        id: c.id,
        change: mine.some((e) => e.effect === "removed") ? "delete" : c.change,
        implementation: c.implementation,
        consumer: { namespace: c.consumer.namespace, ...(cluster ? { cluster } : {}) },
        instance: c.instance,
        ...(c.before ? { before: c.before } : {}),
        ...(c.after ? { after: c.after } : {}),
        hops,
        risk,
        reasons,
      };
    });
  const exposure = exposureDelta(input.exposure?.before ?? [], input.exposure?.after ?? []);
  const ports = portsReport(input.ports ?? []);
  // An environment change that reaches connections is shown with them, not as "other".
  const otherChanges = [...(input.otherChanges ?? []), ...effects.map((e) => e.hop)]
    .filter((h) => h.op !== "same" && !linked.has(h.urn))
    .filter((h, i, all) => all.findIndex((x) => x.urn === h.urn) === i);
  const risks = Object.fromEntries(RISKS.map((r) => [r, 0])) as Record<Risk, number>;
  for (const c of connections) risks[c.risk]++;
  const changedHops = new Set([
    ...connections.flatMap((c) => c.hops.filter((h) => h.op !== "same").map((h) => h.urn)),
    ...otherChanges.map((h) => h.urn),
  ]).size;
  let grade: Grade = connections.reduce<Grade>((g, c) => Math.max(g, GRADE[c.risk]) as Grade, 0);
  // Changes no connection's risk accounts for (a new route, a rule added or removed) are still changes.
  if (grade === 0 && (changedHops > 0 || exposure.added.length + exposure.removed.length > 0)) grade = 3;
  if (exposure.widened.length > 0) grade = 5;
  // A mandatory violation stops `up` (CrossGuard fails the update): as serious as a broken connection.
  const policy = input.policy ?? [];
  const mandatory = policy.filter((p) => p.enforcement === "mandatory").length;
  if (mandatory > 0) grade = 5;
  const summary = {
    grade,
    risks,
    widened: exposure.widened.length,
    changedHops,
    ...(policy.length > 0 ? { policyViolations: policy.length } : {}),
    line: "",
  };
  summary.line = summaryLine(summary, connections.length);
  return {
    schemaVersion: SCHEMA_VERSION,
    sources: input.sources,
    summary,
    connections,
    otherChanges,
    exposure,
    ports,
    blastRadius: blastRadius(connections),
    policy,
    cost: input.cost ?? {
      estimated: false,
      items: [],
      unpriced: [],
      note: "no environment stack previewed (--stack): connection changes create nothing with a list price",
    },
    notes: input.notes ?? [],
  };
}

const GRADE_WORDS: Record<Grade, string> = {
  0: "no network change",
  3: "safe changes",
  4: "consumers affected (endpoint change, interruption or unknown)",
  5: "BROKEN connection, WIDENED exposure or a mandatory policy violation",
};

function summaryLine(s: Omit<NetworkPreviewReport["summary"], "line">, total: number): string {
  const parts = RISKS.filter((r) => r !== "none" && s.risks[r] > 0).map(
    (r) => `${s.risks[r]} ${RISK_WORDS[r]}`,
  );
  const conns =
    parts.length > 0 ? `${parts.join(", ")} of ${total} connections` : `${total} connections unchanged`;
  const widened = s.widened > 0 ? `; ${s.widened} exposure widened` : "";
  const policy = s.policyViolations
    ? `; ${s.policyViolations} policy violation${s.policyViolations === 1 ? "" : "s"}`
    : "";
  return `exit ${s.grade} — ${GRADE_WORDS[s.grade]}: ${conns}${widened}${policy}; ${s.changedHops} resources change`;
}

/** `--fail-on` levels: the lowest grade that makes the command exit non-zero. */
export const FAIL_ON = { change: 3, endpoint: 4, broken: 5, never: 6 } as const;
export type FailOn = keyof typeof FAIL_ON;

export function isFailOn(v: string): v is FailOn {
  return Object.prototype.hasOwnProperty.call(FAIL_ON, v);
}

/** The process exit code: the grade when it reaches the `--fail-on` level, else 0. */
export function exitCode(report: Pick<NetworkPreviewReport, "summary">, failOn: FailOn = "change"): number {
  return report.summary.grade >= FAIL_ON[failOn] ? report.summary.grade : 0;
}
