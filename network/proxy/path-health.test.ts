import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { networkPath } from "../../test/helpers/network-path";
import type { BridgeTarget } from "../contract/bridge-target";
import type { PathHealth } from "../contract/implementation";
import { localHaproxyProvider } from "./local-haproxy";
import { renderHaproxyConfig } from "./model/haproxy-config";
import { healthBind } from "./model/path-health";
import { localProxyDir } from "./model/target";
import { proxyHealthReader } from "./path-health";

async function listen(): Promise<net.Server & { port: number }> {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}

/** `count` distinct loopback ports nothing listens on: all bound at once, then released. */
async function freePorts(count: number): Promise<number[]> {
  const held = await Promise.all(Array.from({ length: count }, () => listen()));
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  return held.map((s) => s.port);
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The local target's health, read from a real HAProxy process as the bridge's local target
 * runs it (LocalHaproxy, a rendered config with its own health port): a path whose instance
 * listens is Ready, one whose instance refuses goes InstanceUnreachable once HAProxy's checks
 * fail, and a killed process is ProxyUnavailable, naming its directory.
 */
describe("proxy: the local target's health from its HAProxy process", function () {
  this.timeout(60_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-local-health-"));
  const key = "team-a/proxy";
  const dir = localProxyDir(stateDir, key);
  const target: BridgeTarget = {
    kind: "local",
    stateDir,
    bindAddress: "127.0.0.1",
    portRange: { from: 1, to: 2 },
  };
  let instance: net.Server & { port: number };

  after(async () => {
    await localHaproxyProvider.delete(dir, { dir, config: "" });
    instance?.close();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("says nothing for a group that has not run here (no config yet)", async () => {
    assert.deepEqual(await proxyHealthReader({}).read(key, target, [networkPath("orders")]), {});
    assert.equal(proxyHealthReader({}).reads(key, target), true);
  });

  it("Ready where HAProxy reaches the instance, InstanceUnreachable where it is refused, ProxyUnavailable once the process is gone", async () => {
    instance = await listen();
    // Distinct from the instance's (still bound) and from each other (bound together).
    const [refused, orders, cache, stats, health] = (await freePorts(5)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const connections = [
      { id: "orders", instanceHost: "127.0.0.1", port: instance.port },
      { id: "cache", instanceHost: "127.0.0.1", port: refused },
    ];
    const config = renderHaproxyConfig(
      connections,
      { orders: orders, cache: cache },
      { bindAddress: "127.0.0.1", statsPort: stats, healthPort: health, nbthread: 1 },
    );
    assert.deepEqual(healthBind(config), { host: "127.0.0.1", port: health });
    await localHaproxyProvider.create({ dir, config });
    const live = connections.map((c) =>
      networkPath(c.id, { spec: { instanceHost: c.instanceHost, port: c.port } }),
    );
    const reader = proxyHealthReader({});
    const seen = await until(
      "orders Ready and cache InstanceUnreachable",
      () => reader.read(key, target, live),
      (h: Record<string, PathHealth>) =>
        h.orders?.ready === true && h.cache?.reason === "InstanceUnreachable",
    );
    assert.match(
      seen.cache!.message,
      new RegExp(`127\\.0\\.0\\.1:${refused} fail on 1 of 1 HAProxy processes`),
    );

    process.kill(localHaproxyProvider.pidOf(dir)!, "SIGKILL");
    const gone = await until(
      "ProxyUnavailable",
      () => reader.read(key, target, live),
      (h: Record<string, PathHealth>) => h.orders?.reason === "ProxyUnavailable",
    );
    assert.equal(gone.cache?.reason, "ProxyUnavailable");
    assert.match(
      gone.orders!.message,
      new RegExp(`HAProxy process \\(${dir.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\) is not running`),
    );
  });
});
