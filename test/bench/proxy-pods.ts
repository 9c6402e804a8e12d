/**
 * pgbench select-only (-S) through the TcpProxy *pods* against straight to the PostgreSQL pod,
 * in one run, alternating rounds so drift on this noisy machine hits both alike. Both paths are
 * NodePorts of one local node (kube-proxy, then the pod), so the ratio is what the proxy pod
 * adds. test/e2e/bridge-pod.test.ts runs it on the connection the bridge pod realised and prints
 * the figures; on its own, against a running cluster:
 *
 *   BENCH_HOST=172.30.x.2 BENCH_DIRECT_PORT=… BENCH_PROXY_PORT=… PGPASSWORD=… \
 *     bash scripts/node.sh tsx test/bench/proxy-pods.ts
 *
 * BENCH_SECONDS (default 5), BENCH_ROUNDS (default 2), BENCH_CLIENTS (default 4).
 */
import { execFile } from "node:child_process";
import { pgbenchTps } from "../helpers/pg-haproxy";

export interface ProxyPodsBench {
  host: string;
  directPort: number;
  proxyPort: number;
  password: string;
  seconds?: number;
  rounds?: number;
  clients?: number;
  log?: (line: string) => void;
}

export interface ProxyPodsResult {
  directTps: number;
  proxyTps: number;
  /** proxy / direct */
  ratio: number;
}

/** pgbench with the password in its environment (never on a command line). */
function pgbench(b: ProxyPodsBench, port: number, args: string[], seconds: number): Promise<string> {
  const argv = ["-h", b.host, "-p", String(port), "-U", "postgres", ...args];
  return new Promise((resolve, reject) =>
    execFile(
      "pgbench",
      argv,
      {
        env: { ...process.env, PGPASSWORD: b.password, PGSSLMODE: "disable", PGCONNECT_TIMEOUT: "5" },
        timeout: (seconds + 60) * 1000,
        encoding: "utf8",
      },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`pgbench ${args.join(" ")} on port ${port}: ${stderr || err.message}`))
          : resolve(stdout),
    ),
  );
}

export async function proxyPodsBench(b: ProxyPodsBench): Promise<ProxyPodsResult> {
  const seconds = b.seconds ?? 5;
  const rounds = b.rounds ?? 2;
  const clients = b.clients ?? 4;
  const log = b.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  log(`pgbench -i (scale 1) on ${b.host}:${b.directPort}`);
  await pgbench(b, b.directPort, ["-i", "-s", "1", "-q", "postgres"], 120);
  const select = [
    "-S",
    "-n",
    "-T",
    String(seconds),
    "-c",
    String(clients),
    "-j",
    String(clients),
    "postgres",
  ];
  const tps = { direct: [] as number[], proxy: [] as number[] };
  for (let round = 1; round <= rounds; round++) {
    // Each round swaps the order, so a warm-up or a neighbour's burst does not favour one path.
    const order = [
      ["direct", b.directPort],
      ["proxy", b.proxyPort],
    ] as const;
    for (const [which, port] of round % 2 === 1 ? order : [...order].reverse()) {
      const t = pgbenchTps(await pgbench(b, port, select, seconds));
      tps[which].push(t);
      log(`round ${round}/${rounds} ${which}: ${t.toFixed(0)} tps`);
    }
  }
  const mean = (l: number[]) => l.reduce((a, x) => a + x, 0) / l.length;
  const directTps = mean(tps.direct);
  const proxyTps = mean(tps.proxy);
  return { directTps, proxyTps, ratio: proxyTps / directTps };
}

if (require.main === module) {
  const need = (k: string) => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} must be set (see the header of test/bench/proxy-pods.ts)`);
    return v;
  };
  proxyPodsBench({
    host: need("BENCH_HOST"),
    directPort: Number(need("BENCH_DIRECT_PORT")),
    proxyPort: Number(need("BENCH_PROXY_PORT")),
    password: need("PGPASSWORD"),
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    rounds: Number(process.env.BENCH_ROUNDS ?? 2),
    clients: Number(process.env.BENCH_CLIENTS ?? 4),
  }).then(
    (r) =>
      process.stdout.write(
        `direct ${r.directTps.toFixed(0)} tps, through the proxy pods ${r.proxyTps.toFixed(0)} tps: ratio ${r.ratio.toFixed(3)}\n`,
      ),
    (e: Error) => {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    },
  );
}
