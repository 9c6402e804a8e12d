/**
 * Port ranges of the local target's groups. Every group's proxy runs on this one machine, so
 * each group holds its own slots of the bridge's --port-range (whole slots of --slot-size
 * ports), as many as its connections need (plus the proxy's own listeners), up to
 * --max-ports-per-group. What a group holds is stable: it is never moved or shrunk while the
 * group lives, and the ports planner keeps every port that stays in the group's ports, so
 * nobody's port moves.
 *
 * A group grows in place first (the slots after each of its blocks, while free), and then
 * into any free slot of the range, as a further block: blocks need not touch, so with many
 * groups a late big one still finds room while most of the range is free. A group's ports are the hull of its blocks with the slots
 * between them (other groups') reserved, which the ports planner already honours. A new group
 * starts in the middle of the largest free run, so the group before it can still grow in
 * place. Pure.
 */

import type { PortRange } from "../net/port-range";

export interface SlotBlock {
  /** First slot. */
  slot: number;
  /** Slots held. */
  count: number;
}

/** Each group's blocks, sorted by slot, none touching another of the same group. */
export type Slots = Record<string, SlotBlock[]>;

function isBlock(v: unknown): v is SlotBlock {
  if (typeof v !== "object" || v === null) return false;
  const { slot, count } = v as { slot?: unknown; count?: unknown };
  return typeof slot === "number" && typeof count === "number";
}

/**
 * The slots file's content. Older bridges wrote one slot number per group, then one block per
 * group; both still read.
 */
export function parseSlots(text: string): Slots {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null) return {};
  const out: Slots = {};
  for (const [key, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof v === "number") out[key] = [{ slot: v, count: 1 }];
    else if (isBlock(v)) out[key] = [{ slot: v.slot, count: v.count }];
    else if (Array.isArray(v) && v.length > 0 && v.every(isBlock))
      out[key] = normalise(v.map((b) => ({ slot: b.slot, count: b.count })));
  }
  return out;
}

/** Slots held in all. */
export function heldSlots(blocks: readonly SlotBlock[] | undefined): number {
  return (blocks ?? []).reduce((n, b) => n + b.count, 0);
}

/** Sorted, with touching blocks merged. */
function normalise(blocks: readonly SlotBlock[]): SlotBlock[] {
  const out: SlotBlock[] = [];
  for (const b of [...blocks].sort((x, y) => x.slot - y.slot)) {
    const last = out[out.length - 1];
    if (last && last.slot + last.count === b.slot) last.count += b.count;
    else out.push({ ...b });
  }
  return out;
}

function used(slots: Readonly<Slots>, except?: string): Set<number> {
  const taken = new Set<number>();
  for (const [key, blocks] of Object.entries(slots)) {
    if (key === except) continue;
    for (const b of blocks) for (let i = b.slot; i < b.slot + b.count; i++) taken.add(i);
  }
  return taken;
}

function freeRuns(taken: Set<number>, maxSlots: number): { start: number; length: number }[] {
  const runs: { start: number; length: number }[] = [];
  for (let i = 0; i < maxSlots; i++) {
    if (taken.has(i)) continue;
    const last = runs[runs.length - 1];
    if (last && last.start + last.length === i) last.length++;
    else runs.push({ start: i, length: 1 });
  }
  return runs;
}

/**
 * The blocks of `key` for a group that needs `ports` ports: what it holds, grown in place and
 * then into further free slots as far as needed; for a new group, a first block in the middle
 * of the largest free run (and further ones when that run is too short). Throws only for a
 * new group when no slot is free; a group that cannot grow keeps what it has.
 */
export function placeGroup(
  slots: Readonly<Slots>,
  key: string,
  ports: number,
  opts: { slotSize: number; maxSlots: number; maxSlotsPerGroup: number },
): SlotBlock[] {
  const want = Math.max(1, Math.min(opts.maxSlotsPerGroup, Math.ceil(ports / opts.slotSize)));
  const taken = used(slots, key);
  const current = slots[key] ?? [];
  const held = new Set<number>();
  for (const b of current) for (let i = b.slot; i < b.slot + b.count; i++) held.add(i);
  const take = (slot: number) => {
    held.add(slot);
    taken.add(slot);
  };

  if (current.length === 0) {
    const largest = freeRuns(taken, opts.maxSlots).reduce<{ start: number; length: number } | undefined>(
      (best, r) => (!best || r.length > best.length ? r : best),
      undefined,
    );
    if (!largest)
      throw new Error(
        `no free port slot for ${key}: all ${opts.maxSlots} slots of the bridge's port range are in use; widen --port-range`,
      );
    const count = Math.min(want, largest.length);
    // At the very start nobody precedes it; elsewhere leave the preceding group half the room.
    const start = largest.start === 0 ? 0 : largest.start + Math.floor((largest.length - count) / 2);
    for (let i = start; i < start + count; i++) take(i);
  }

  // In place: after each block, while the next slot is free.
  for (const b of normalise(current)) {
    let next = b.slot + b.count;
    while (held.size < want && next < opts.maxSlots && !taken.has(next)) take(next++);
  }
  // Elsewhere: the free slots after the group's last one first (keeps its ports together),
  // then those before it.
  if (held.size < want) {
    const last = Math.max(...held);
    const order = [...Array(opts.maxSlots).keys()].map((i) => (last + 1 + i) % opts.maxSlots);
    for (const i of order) {
      if (held.size >= want) break;
      if (!taken.has(i)) take(i);
    }
  }
  return normalise([...held].map((slot) => ({ slot, count: 1 })));
}

/** A group's ports: the hull of its blocks, and the ports of that hull it does not hold. */
export interface GroupPorts {
  range: PortRange;
  /** Ports in `range` that belong to other groups' slots (the planner never hands them out). */
  reserved: number[];
}

/** The ports of a group's blocks. */
export function groupPorts(base: PortRange, blocks: readonly SlotBlock[], slotSize: number): GroupPorts {
  if (blocks.length === 0) throw new Error("a group holds at least one slot");
  const sorted = normalise(blocks);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const from = base.from + first.slot * slotSize;
  const to = base.from + (last.slot + last.count) * slotSize - 1;
  if (to > base.to)
    throw new Error(
      `slots ${first.slot}-${last.slot + last.count - 1} (${from}-${to}) lie outside the port range ${base.from}-${base.to}`,
    );
  const reserved: number[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const gapFrom = base.from + (sorted[i - 1]!.slot + sorted[i - 1]!.count) * slotSize;
    const gapTo = base.from + sorted[i]!.slot * slotSize - 1;
    for (let p = gapFrom; p <= gapTo; p++) reserved.push(p);
  }
  return { range: { from, to }, reserved };
}
