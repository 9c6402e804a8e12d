/**
 * pgbench from a consumer *pod* through several network paths to one PostgreSQL, in one run,
 * alternating the paths each round so drift on this noisy machine hits all alike:
 * select-only TPS on held connections (`-S`, `-n`: no vacuum between runs), and connect latency as the average latency of
 * `-S -C` (a new connection, and its TCP and PostgreSQL handshakes, per transaction).
 * test/e2e/bridge-pod.test.ts runs it from a pod in the app side's namespace over direct (the
 * instance's Service), the proxy pods and the WireGuard pods (forwarder, tunnel, gateway), and
 * prints the figures and the ratios against direct. Figures only: nothing asserts a speed.
 */
import { pgbenchTps } from "./pg-haproxy";

export interface PodPath {
  name: string;
  host: string;
  port: number;
}

export interface PodPathFigures {
  tps: number;
  /** Average latency of a transaction on a new connection (ms). */
  connectMs: number;
}

export interface PodPathsBench {
  /** Runs a command in the consumer pod (PGPASSWORD set there); resolves with stdout. */
  exec: (argv: string[]) => string;
  paths: PodPath[];
  seconds?: number;
  rounds?: number;
  clients?: number;
  log?: (line: string) => void;
}

function latencyMs(output: string): number {
  const m = /latency average = ([\d.]+) ms/.exec(output);
  if (!m) throw new Error(`no latency in pgbench output:\n${output}`);
  return Number(m[1]);
}

export function podPathsBench(b: PodPathsBench): Record<string, PodPathFigures> {
  const seconds = String(b.seconds ?? 5);
  const rounds = b.rounds ?? 2;
  const clients = String(b.clients ?? 4);
  const log = b.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const conn = (p: PodPath) => ["-h", p.host, "-p", String(p.port), "-U", "postgres"];
  const first = b.paths[0];
  if (!first) throw new Error("podPathsBench needs at least one path");
  b.exec(["pgbench", ...conn(first), "-i", "-s", "1", "-q", "postgres"]);
  const tps: Record<string, number[]> = {};
  const connect: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    // Odd rounds run the paths in reverse, so none always goes first.
    const order = r % 2 === 0 ? b.paths : [...b.paths].reverse();
    for (const p of order) {
      const held = pgbenchTps(
        b.exec(["pgbench", ...conn(p), "-n", "-S", "-T", seconds, "-c", clients, "postgres"]),
      );
      const fresh = latencyMs(
        b.exec(["pgbench", ...conn(p), "-n", "-S", "-C", "-T", seconds, "-c", "1", "postgres"]),
      );
      (tps[p.name] ??= []).push(held);
      (connect[p.name] ??= []).push(fresh);
      log(
        `round ${r + 1}/${rounds} ${p.name}: ${held.toFixed(0)} tps, ${fresh.toFixed(2)} ms per connection`,
      );
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  return Object.fromEntries(
    b.paths.map((p) => [p.name, { tps: mean(tps[p.name] ?? []), connectMs: mean(connect[p.name] ?? []) }]),
  );
}
