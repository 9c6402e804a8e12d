/**
 * What a chaos run saw, from two timelines of the same paths (test/bench/chaos.ts): probes from
 * app-cluster pods (did a connection through the path reach the instance?) and the claims'
 * status (did the path say Ready?). Pure: the times are passed in, in milliseconds.
 */

/** One probe of one path: a PostgreSQL handshake through its hostForConsumer:port. */
export interface ProbeSample {
  at: number;
  path: string;
  ok: boolean;
}

/** One read of one claim's status. */
export interface StatusSample {
  at: number;
  path: string;
  ready: boolean;
  port?: number;
}

/** A stretch in which a path's probes failed while its claim said Ready=True. */
export interface FalseReady {
  path: string;
  from: number;
  to: number;
}

const byTime = <T extends { at: number }>(xs: readonly T[]) => [...xs].sort((a, b) => a.at - b.at);

function groupByPath<T extends { path: string; at: number }>(xs: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of byTime(xs)) out.set(x.path, [...(out.get(x.path) ?? []), x]);
  return out;
}

/** The status a path had at a moment: the last read at or before it (undefined before the first). */
function statusAt(reads: readonly StatusSample[], at: number): StatusSample | undefined {
  let last: StatusSample | undefined;
  for (const r of reads) {
    if (r.at > at) break;
    last = r;
  }
  return last;
}

/**
 * The stretches in which probes failed while the status said Ready: each from its first such
 * probe to the next probe that succeeded or found the status no longer Ready (or, for the last,
 * the last such probe plus one interval).
 */
export function falseReadyStretches(
  probes: readonly ProbeSample[],
  statuses: readonly StatusSample[],
  intervalMs: number,
): FalseReady[] {
  const reads = groupByPath(statuses);
  const out: FalseReady[] = [];
  for (const [path, samples] of groupByPath(probes)) {
    let open: FalseReady | undefined;
    for (const p of samples) {
      const lying = !p.ok && statusAt(reads.get(path) ?? [], p.at)?.ready === true;
      if (lying && !open) open = { path, from: p.at, to: p.at + intervalMs };
      else if (lying && open) open.to = p.at + intervalMs;
      else if (open) {
        out.push({ ...open, to: p.at });
        open = undefined;
      }
    }
    if (open) out.push(open);
  }
  return out;
}

/** Each path's longest run of failed probes, from its first failure to the next success, in ms. */
export function longestOutages(probes: readonly ProbeSample[], intervalMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [path, samples] of groupByPath(probes)) {
    let since: number | undefined;
    let longest = 0;
    let last = 0;
    for (const p of samples) {
      if (!p.ok && since === undefined) since = p.at;
      if (p.ok && since !== undefined) {
        longest = Math.max(longest, p.at - since);
        since = undefined;
      }
      last = p.at;
    }
    if (since !== undefined) longest = Math.max(longest, last + intervalMs - since);
    out.set(path, longest);
  }
  return out;
}

/**
 * When every path was usable again after a fault: the first moment from which each path's
 * probes all succeed, `steady` of them in a row at least; undefined while some path is not.
 */
export function recoveredAt(
  probes: readonly ProbeSample[],
  paths: readonly string[],
  steady: number,
): number | undefined {
  const byPath = groupByPath(probes);
  let latest = 0;
  for (const path of paths) {
    const samples = byPath.get(path) ?? [];
    let firstOfTheRest = samples.length;
    while (firstOfTheRest > 0 && samples[firstOfTheRest - 1]!.ok) firstOfTheRest--;
    const after = samples.slice(firstOfTheRest);
    if (after.length < steady) return undefined;
    latest = Math.max(latest, after[0]!.at);
  }
  return latest;
}
