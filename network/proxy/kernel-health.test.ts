import { strict as assert } from "node:assert";
import { createServer, type Server } from "node:net";
import type * as k8s from "@kubernetes/client-node";
import { networkPath } from "../../test/helpers/network-path";
import type { KubernetesTarget } from "../contract/implementation";
import { dialOnce, dialSettled, kernelHealth } from "./kernel-health";
import { kernelPortName } from "./model/kernel-path";

/** A listener on loopback, and the port it got. */
async function listening(port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** A loopback port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const { server, port } = await listening();
  await new Promise((r) => server.close(r));
  return port;
}

const target: KubernetesTarget = {
  kind: "kubernetes",
  kubeconfig: "",
  namespace: "klutch-network",
  portRange: { from: 30000, to: 30999 },
  serviceType: "ClusterIP",
  hop: "kernel",
};

/** The CoreV1Api calls kernelHealth makes, answering from `services` (name → object) or 404. */
function coreWith(services: Record<string, object>): k8s.CoreV1Api {
  return {
    readNamespacedService: ({ name, namespace }: { name: string; namespace: string }) => {
      const s = services[`${namespace}/${name}`];
      return s ? Promise.resolve(s) : Promise.reject(Object.assign(new Error("not found"), { code: 404 }));
    },
  } as unknown as k8s.CoreV1Api;
}

describe("proxy: the kernel hop's dial, on loopback", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it("a listener is connected; a port nothing listens on is refused (what kube-proxy's reject gives too)", async () => {
    const open = await listening();
    servers.push(open.server);
    assert.equal(await dialOnce("127.0.0.1", open.port), "connected");
    assert.equal(await dialOnce("127.0.0.1", await closedPort()), "refused");
  });

  it("keeps dialling a refusing port within its settle time, so a listener that comes a moment later is found", async () => {
    const port = await closedPort();
    const started = Date.now();
    setTimeout(() => void listening(port).then((l) => servers.push(l.server)), 600);
    assert.equal(await dialSettled("127.0.0.1", port, 3_000), "connected");
    assert.ok(Date.now() - started >= 500, "connected only once the listener was there");
    assert.equal(await dialSettled("127.0.0.1", await closedPort(), 600), "refused");
  });

  it("reads the group's Service and judges each path by its own port: the listening one Ready, the refused one InstanceUnreachable; no Service yet says nothing", async () => {
    const open = await listening();
    servers.push(open.server);
    const shut = await closedPort();
    const orders = networkPath("orders", { spec: { consumerNamespace: "team-k" } });
    const cache = networkPath("cache", { spec: { consumerNamespace: "team-k", port: 6379 } });
    const service = {
      spec: {
        clusterIP: "127.0.0.1",
        ports: [
          { name: kernelPortName("orders"), port: open.port },
          { name: kernelPortName("cache"), port: shut },
        ],
      },
    };
    const core = coreWith({ "klutch-network/np-team-k-proxy": service });
    const health = await kernelHealth(core, "team-k/proxy", target, [orders, cache], 300);
    assert.equal(health.orders?.ready, true);
    assert.equal(health.cache?.ready, false);
    assert.equal(health.cache?.reason, "InstanceUnreachable");
    assert.deepEqual(await kernelHealth(coreWith({}), "team-k/proxy", target, [orders], 300), {});
  });
});
