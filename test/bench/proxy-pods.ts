/**
 * The proxy pods' benchmark on its own, against a running cluster (test/e2e/bridge-pod.test.ts
 * runs the same measurement, test/helpers/pgbench-proxy-pods.ts, on the connection it realised):
 *
 *   BENCH_HOST=172.30.x.2 BENCH_DIRECT_PORT=… BENCH_PROXY_PORT=… PGPASSWORD=… \
 *     bash scripts/node.sh tsx test/bench/proxy-pods.ts
 *
 * BENCH_SECONDS (default 5), BENCH_ROUNDS (default 2), BENCH_CLIENTS (default 4).
 */
import { proxyPodsBench } from "../helpers/pgbench-proxy-pods";

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
