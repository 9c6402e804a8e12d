import type { PortRange } from "./types";

/**
 * Which proxy port each connection gets. Pure and deterministic: the same input always
 * gives the same plan, whatever the order of the ids.
 *
 * Rules:
 * - a connection keeps the port it had (`previous`) as long as that port is still in the
 *   range and not reserved, so clients never have to be told about a new port;
 * - no two connections share a port;
 * - a port is handed out again only after its connection is gone, and then as late as
 *   possible: never-used ports come first, then released ports, least recently released
 *   first. A client that still holds the old connection's host:port is thereby unlikely to
 *   reach the new connection's instance by mistake;
 * - running out of ports is an error that names the range and how many ports are needed;
 *   or, with `overflow: "leave-out"` (the bridge), only the connections that do not fit go
 *   without a port and are listed in `unplaced`: a connection that has a port keeps it, ids
 *   in `required` (the proxy's own listeners) are served first, then new ids in sorted order.
 *   One connection too many then never takes the whole proxy down.
 *
 * This module imports nothing at run time: the PortAllocation dynamic provider captures it
 * by value when Pulumi serializes the provider, so it must stay self-contained.
 */

/** A port given back when its connection went away; the history is oldest first. */
export interface ReleasedPort {
  port: number;
  /** The connection that held it, for the operator reading the state. */
  id: string;
}

export interface PortPlanInput {
  range: PortRange;
  /** Every connection (listener key) that needs a port now. */
  ids: readonly string[];
  /** The assignments of the last run (`PortPlan.assignments`). */
  previous?: Readonly<Record<string, number>>;
  /** The release history of the last run (`PortPlan.released`). */
  released?: readonly ReleasedPort[];
  /** Ports in the range that must never be handed out (e.g. the proxy's own stats port). */
  reserved?: readonly number[];
  /** How many releases to remember; default DEFAULT_HISTORY_LIMIT. */
  historyLimit?: number;
  /** What to do when the range is too small: fail (default) or leave the last ids out. */
  overflow?: "error" | "leave-out";
  /** Ids that must get a port even when others are left out (a subset of `ids`). */
  required?: readonly string[];
}

export interface PortPlan {
  /** id → port, keys sorted. */
  assignments: Record<string, number>;
  /** Release history to pass back next time, oldest first, at most historyLimit entries. */
  released: ReleasedPort[];
  /** Ports freed by this plan (their connections are gone), ascending. */
  releasedNow: number[];
  /** Ids that got a port in this plan (new, or moved), sorted. */
  allocated: string[];
  /** Ids that had a port but had to move (out of range, reserved, or shared in corrupt state), sorted. */
  moved: string[];
  /** Ids left without a port because the range is full (only with `overflow: "leave-out"`), sorted. */
  unplaced: string[];
}

export const DEFAULT_HISTORY_LIMIT = 64;

/** Why a port range is unusable, naming the field; undefined when it is fine. */
export function portRangeProblem(range: unknown, field = "portRange"): string | undefined {
  if (typeof range !== "object" || range === null) {
    return `${field} must be an object {from, to}, e.g. {from: 30000, to: 30999}`;
  }
  const { from, to } = range as Record<string, unknown>;
  for (const [name, value] of [
    ["from", from],
    ["to", to],
  ] as const) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) {
      return `${field}.${name} must be a whole number from 1 to 65535 (got ${JSON.stringify(value)})`;
    }
  }
  if ((from as number) > (to as number)) {
    return `${field}.from (${String(from)}) must not be greater than ${field}.to (${String(to)}); swap them`;
  }
  return undefined;
}

/** Why a list of ids is unusable (empty or duplicate ids), naming the entry; undefined when fine. */
export function idsProblem(ids: unknown, field = "ids"): string | undefined {
  if (!Array.isArray(ids)) return `${field} must be a list of connection ids`;
  const seen = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const id: unknown = ids[i];
    if (typeof id !== "string" || id.trim() === "") {
      return `${field}[${i}] must be a non-empty connection id such as namespace/name (got ${JSON.stringify(id)})`;
    }
    if (seen.has(id)) {
      return `${field}[${i}] duplicates connection id "${id}"; every connection needs its own id`;
    }
    seen.add(id);
  }
  return undefined;
}

export function planPorts(input: PortPlanInput): PortPlan {
  const rangeProblem = portRangeProblem(input.range);
  if (rangeProblem) throw new Error(rangeProblem);
  const problem = idsProblem(input.ids);
  if (problem) throw new Error(problem);
  const { from, to } = input.range;
  const limit = input.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  const inRange = (p: unknown): p is number =>
    typeof p === "number" && Number.isInteger(p) && p >= from && p <= to;
  const reserved = new Set((input.reserved ?? []).filter(inRange));
  const ids = [...input.ids].sort(byString);
  const current = new Set(ids);
  const previous = input.previous ?? {};

  const usable = to - from + 1 - reserved.size;
  const required = new Set((input.required ?? []).filter((id) => current.has(id)));
  if (ids.length > usable && (input.overflow !== "leave-out" || required.size > usable)) {
    throw new Error(portRangeFull(input.range, usable, reserved.size, ids.length));
  }

  // Keep every still-valid previous assignment; sorted order decides who keeps a shared port.
  const assignments: Record<string, number> = {};
  const taken = new Set<number>();
  const needPort: string[] = [];
  const moved: string[] = [];
  for (const id of ids) {
    const p = previous[id];
    if (inRange(p) && !reserved.has(p) && !taken.has(p)) {
      assignments[id] = p;
      taken.add(p);
    } else {
      if (p !== undefined) moved.push(id);
      needPort.push(id);
    }
  }

  const releasedNow = Object.keys(previous)
    .filter((id) => !current.has(id))
    .map((id) => ({ id, port: previous[id] }))
    .filter((r): r is ReleasedPort => inRange(r.port) && !taken.has(r.port))
    .sort((a, b) => a.port - b.port || byString(a.id, b.id));

  // History: oldest first, one entry per port, without ports that are in use again.
  let history = [...(input.released ?? []), ...releasedNow].filter(
    (r) => r !== null && typeof r === "object" && inRange(r.port) && !taken.has(r.port),
  );
  // Keep only the latest release of each port (walk newest first, then restore the order).
  const seen = new Set<number>();
  history = history
    .reverse()
    .filter((r) => !seen.has(r.port) && seen.add(r.port) !== undefined)
    .reverse();

  const candidates = freePorts(from, to, taken, reserved, history, needPort.length);
  // Fewer candidates than ids only in leave-out mode: required ids first, then sorted order.
  const queue = [...needPort.filter((id) => required.has(id)), ...needPort.filter((id) => !required.has(id))];
  const placed = queue.slice(0, candidates.length);
  const unplaced = queue.slice(candidates.length).sort(byString);
  if (unplaced.some((id) => required.has(id))) {
    // Required ids that kept no port lost it to connections that did: never expected, since
    // the proxy's own listeners are placed when it is created.
    throw new Error(portRangeFull(input.range, usable, reserved.size, ids.length));
  }
  const handedOut = new Set<number>();
  placed.forEach((id, i) => {
    const port = candidates[i] as number;
    assignments[id] = port;
    handedOut.add(port);
  });
  history = history.filter((r) => !handedOut.has(r.port));
  if (history.length > limit) history = history.slice(history.length - limit);

  const sorted: Record<string, number> = {};
  for (const id of ids) if (assignments[id] !== undefined) sorted[id] = assignments[id];
  return {
    assignments: sorted,
    released: history.map((r) => ({ port: r.port, id: String(r.id) })),
    releasedNow: [...new Set(releasedNow.map((r) => r.port))],
    allocated: placed.sort(byString),
    moved,
    unplaced,
  };
}

/** The error (or, per connection, the reason) for a range that cannot hold every connection. */
export function portRangeFull(range: PortRange, usable: number, reserved: number, needed: number): string {
  const reservedNote = reserved > 0 ? ` (${reserved} of them reserved)` : "";
  return (
    `port range ${range.from}-${range.to} has ${usable} usable ports${reservedNote} but ${needed} connections need one: ` +
    `widen portRange (e.g. to: ${range.from + needed + reserved - 1}) or remove ${needed - usable} connections`
  );
}

/** The first `count` free ports in preference order: never used ascending, then least recently released. */
function freePorts(
  from: number,
  to: number,
  taken: ReadonlySet<number>,
  reserved: ReadonlySet<number>,
  history: readonly ReleasedPort[],
  count: number,
): number[] {
  const out: number[] = [];
  if (count === 0) return out;
  const remembered = new Set(history.map((r) => r.port));
  for (let p = from; p <= to && out.length < count; p++) {
    if (!taken.has(p) && !reserved.has(p) && !remembered.has(p)) out.push(p);
  }
  for (const r of history) {
    if (out.length >= count) break;
    if (!reserved.has(r.port)) out.push(r.port);
  }
  return out;
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
