import * as fs from "node:fs";
import * as path from "node:path";
import { reapOrphans } from "../bridge/orphans";
import { LocalClusters } from "../lib/local-clusters";
import { LocalCrossplane } from "../lib/local-clusters/crossplane";
import { toolchainEnv } from "../lib/toolchain";
async function main() {
  const work = process.argv[2] as string;
  const cp = process.argv[3] as string;
  for (const d of fs.readdirSync(work).filter((d) => d.startsWith("bridge"))) {
    const proxies = path.join(work, d, "proxies");
    if (fs.existsSync(proxies))
      for (const g of fs.readdirSync(proxies)) {
        try {
          const pid = Number(fs.readFileSync(path.join(proxies, g, "haproxy.pid"), "utf8").trim().split(/\s+/)[0]);
          process.kill(pid, "SIGTERM");
          console.log("killed haproxy", pid);
        } catch {}
      }
    await reapOrphans(`file://${path.join(work, d, "state")}`, (p) => console.log("reaped", p));
  }
  await new LocalCrossplane(path.join(work, "clusters"), cp, toolchainEnv()).stop();
  await new LocalClusters(path.join(work, "clusters")).down();
  console.log("down");
}
main().catch((e) => { console.error(e); process.exit(1); });
