import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";

/**
 * A release host on loopback, as a test stands it in for the one lib/release/publication.ts
 * names: the files of one folder under `/releases/v<version>/`, GET only, and a log of every
 * request (what the engine asked for, and what it was answered).
 */
export interface ReleaseServer {
  /** The folder URL an SDK's pluginDownloadURL names: `http://127.0.0.1:<port>/releases/v<version>`. */
  url: string;
  requests: { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

export async function startReleaseServer(dir: string, version: string): Promise<ReleaseServer> {
  const prefix = `/releases/v${version}/`;
  const requests: ReleaseServer["requests"] = [];
  const server = http.createServer((req, res) => {
    const urlPath = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const name = urlPath.startsWith(prefix) ? decodeURIComponent(urlPath.slice(prefix.length)) : "";
    const file = path.join(dir, name);
    const served =
      req.method === "GET" &&
      name !== "" &&
      !name.includes("/") &&
      fs.existsSync(file) &&
      fs.statSync(file).isFile();
    requests.push({ method: req.method ?? "", path: urlPath, status: served ? 200 : 404 });
    if (!served) {
      res.writeHead(404).end();
      return;
    }
    const body = fs.readFileSync(file);
    res
      .writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length })
      .end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Port 0: the kernel's free port, so no two runs collide; loopback only.
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix.slice(0, -1)}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
