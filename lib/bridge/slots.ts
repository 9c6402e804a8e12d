/**
 * Port ranges of the local target's groups. Every group's proxy runs on this one machine, so
 * each group gets its own block of the bridge's --port-range: whole slots of --slot-size ports,
 * contiguous, as many as its connections need (plus the proxy's own listeners), up to
 * --max-ports-per-group. A block is stable: it grows in place when the slots after it are free
 * (the ports planner keeps every port that stays in range, so nobody's port moves) and is never
 * moved or shrunk while its group lives; a group that cannot grow keeps what it has and only
 * the connections that do not fit are told so (PortRangeExhausted). New groups are placed in
 * the middle of the largest free run, so the group before them has room to grow too. Pure.
 */

import type { PortRange } from "../../network/proxy/types";

export interface SlotBlock {
  /** First slot. */
  slot: number;
  /** Slots held. */
  count: number;
}

export type Slots = Record<string, SlotBlock>;

/** The slots file's content; older bridges wrote one slot number per group. */
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
    if (typeof v === "number") out[key] = { slot: v, count: 1 };
    else if (typeof v === "object" && v !== null) {
      const { slot, count } = v as { slot?: unknown; count?: unknown };
      if (typeof slot === "number" && typeof count === "number") out[key] = { slot, count };
    }
  }
  return out;
}

function used(slots: Slots, except?: string): Set<number> {
  const taken = new Set<number>();
  for (const [key, b] of Object.entries(slots)) {
    if (key === except) continue;
    for (let i = b.slot; i < b.slot + b.count; i++) taken.add(i);
  }
  return taken;
}

/**
 * The block of `key` for a group that needs `ports` ports: its current block, grown in place
 * as far as needed and free; or, for a new group, a new block. Throws when no slot is free.
 */
export function placeGroup(
  slots: Readonly<Slots>,
  key: string,
  ports: number,
  opts: { slotSize: number; maxSlots: number; maxSlotsPerGroup: number },
): SlotBlock {
  const want = Math.max(1, Math.min(opts.maxSlotsPerGroup, Math.ceil(ports / opts.slotSize)));
  const taken = used(slots, key);
  const current = slots[key];
  if (current) {
    let count = current.count;
    while (count < want && current.slot + count < opts.maxSlots && !taken.has(current.slot + count)) count++;
    return { slot: current.slot, count };
  }
  const runs: { start: number; length: number }[] = [];
  for (let i = 0; i < opts.maxSlots; i++) {
    if (taken.has(i)) continue;
    const last = runs[runs.length - 1];
    if (last && last.start + last.length === i) last.length++;
    else runs.push({ start: i, length: 1 });
  }
  const largest = runs.reduce<{ start: number; length: number } | undefined>(
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
  return { slot: start, count };
}

/** The ports of a block. */
export function blockRange(base: PortRange, block: SlotBlock, slotSize: number): PortRange {
  const from = base.from + block.slot * slotSize;
  const to = from + block.count * slotSize - 1;
  if (to > base.to)
    throw new Error(
      `slots ${block.slot}+${block.count} (${from}-${to}) lie outside the port range ${base.from}-${base.to}`,
    );
  return { from, to };
}
