import * as http from "node:http";
import type { BridgeMetrics } from "./metrics";

/**
 * /healthz and /readyz (200 while the bridge can do its part: a standby always, the leader
 * while its watch on NetworkPaths is alive; a Deployment's liveness and readiness probes) and
 * /metrics (Prometheus text).
 */
export function startOpsServer(
  port: number,
  metrics: BridgeMetrics,
  healthy: () => boolean,
  host = "127.0.0.1",
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.url === "/healthz" || req.url === "/readyz") {
      const ok = healthy();
      res
        .writeHead(ok ? 200 : 503, { "content-type": "text/plain" })
        .end(ok ? "ok\n" : "watch not established\n");
    } else if (req.url === "/metrics") {
      metrics.render().then(
        (text) => res.writeHead(200, { "content-type": metrics.contentType }).end(text),
        (e: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`${e.message}\n`),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
