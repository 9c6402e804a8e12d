/**
 * pgbench select-only (-S) through the TcpProxy *pods* against straight to the PostgreSQL pod,
 * in one run, alternating rounds so drift on this noisy machine hits both alike. Both paths are
 * NodePorts of one local node (kube-proxy, then the pod), so the ratio is what the proxy pod
 * adds. test/e2e/bridge-pod.test.ts runs it on the connection the bridge pod realised and prints
 * the figures; test/bench/proxy-pods.ts runs it against a running cluster.
 */
import { execFile } from "node:child_process";
import { pgbenchTps } from "./pg-haproxy";

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
