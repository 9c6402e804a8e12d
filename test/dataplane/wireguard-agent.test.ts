import { strict as assert } from "node:assert";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import {
  UNREACHED_FILE,
  clientAgentScript,
  clientConfigKey,
  configServerArgs,
  renderClientConfig,
} from "../../network/wireguard/model/cluster-config";
import { freePortRange } from "../helpers/pg-haproxy";
import { eventually } from "../helpers/kubectl";
import { gone } from "../helpers/processes";
import { portsFor } from "../helpers/ports";

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

/** What a TCP connection to 127.0.0.1:port reads before the server closes it; "" when refused. */
function readFrom(port: number, source = "127.0.0.1"): Promise<string> {
  return new Promise((resolve) => {
    let data = "";
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: source });
    socket.setTimeout(3000, () => socket.destroy());
    socket.on("data", (d) => (data += d.toString()));
    socket.on("error", () => resolve(""));
    socket.on("close", () => resolve(data));
  });
}

/**
 * The WireGuard client's agent and the gateway's forwarder-list server
 * (network/wireguard/model/cluster-config.ts) as they run in the pods, here on this machine's
 * loopback: the same shell (dash, the local image's /bin/sh) and socat, with the list
 * server standing where the gateway's tunnel address would be. The pods themselves run in
 * test/e2e/bridge-pod.test.ts; this shows the agent's every step quickly and exactly.
 */
describe("WireGuard client agent and forwarder-list server (data plane, loopback)", function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-agent-"));
  const flows = path.join(dir, "flows");
  const tmp = path.join(dir, "tmp");
  const shared = path.join(dir, "shared");
  for (const d of [flows, tmp, shared]) fs.mkdirSync(d);
  const children: ChildProcess[] = [];
  const servers: net.Server[] = [];
  let cfgPort = 0;
  let fwdA = 0;
  let fwdB = 0;
  const backends: number[] = [];
  let agentLog = "";
  let listServer: ChildProcess | undefined;

  // Atomically, as the kubelet updates a ConfigMap volume and the gateway VM's loop writes its
  // files (tmp + rename): the list server never reads half a file.
  const listFile = path.join(flows, clientConfigKey("127.0.0.1"));
  const publish = (lines: { listenPort: number; host: string; port: number }[], extra = "") => {
    fs.writeFileSync(`${listFile}.tmp`, renderClientConfig("g", lines) + extra);
    fs.renameSync(`${listFile}.tmp`, listFile);
  };
  const startListServer = () => {
    const [listen, system] = configServerArgs(cfgPort, flows);
    const server = spawn("socat", [`${listen},bind=127.0.0.1`, system as string], { stdio: "ignore" });
    children.push(server);
    return server;
  };
  const forwarderPids = () =>
    fs
      .readFileSync(path.join(tmp, "forwarders.state"), "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ").slice(0, 2).join(" "));

  before(async () => {
    const range = await freePortRange(3, hostPorts);
    [cfgPort, fwdA, fwdB] = [range.from, range.from + 1, range.from + 2];
    // Two data services, each answering with its own name.
    for (const name of ["service-a", "service-b"]) {
      const server = net.createServer((s) => s.end(name));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      servers.push(server);
      backends.push((server.address() as net.AddressInfo).port);
    }
    listServer = startListServer();
    const agent = spawn("/bin/sh", ["-c", clientAgentScript("127.0.0.1", cfgPort, { tmp, shared })], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    agent.stdout?.on("data", (d) => (agentLog += d.toString()));
    agent.stderr?.on("data", (d) => (agentLog += d.toString()));
    children.push(agent);
  });

  after(() => {
    for (const c of children) {
      try {
        // The agent's group: its forwarders too.
        if (c.pid) process.kill(-c.pid, "SIGKILL");
      } catch {
        c.kill("SIGKILL");
      }
    }
    for (const s of servers) s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("serves each peer its own list only, closed by `end`: the list of 127.0.0.1 to 127.0.0.1, none to 127.0.0.2", async () => {
    publish([{ listenPort: fwdA, host: "127.0.0.1", port: backends[0]! }]);
    await eventually("the list server to answer", async () => (await readFrom(cfgPort)) !== "", 30_000);
    assert.match(
      await readFrom(cfgPort),
      new RegExp(`^forward ${fwdA} 127\\.0\\.0\\.1 ${backends[0]}\nend\n$`, "m"),
    );
    // Another peer has no list here: a complete, empty answer (just the closing `end`).
    assert.equal(await readFrom(cfgPort, "127.0.0.2"), "end\n");
  });

  it("the agent shares the listed host with the tunnel container and starts its forwarder only once that host is routed", async () => {
    // The agent may have fetched before the first list was published (an empty list: "\nend\n"),
    // so wait for the listed host rather than for the file; its next round (3 s) shares it.
    const sharedHosts = () => {
      try {
        return fs.readFileSync(path.join(shared, "hosts"), "utf8");
      } catch {
        return undefined;
      }
    };
    await eventually(
      "the agent to share the listed host",
      () => sharedHosts() === " 127.0.0.1\nend\n",
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nhosts: ${JSON.stringify(sharedHosts())}\n${agentLog}`);
    });
    // Not routed yet (the tunnel container has not answered): no forwarder, so nothing can
    // leave by the pod's default route.
    await new Promise((r) => setTimeout(r, 4000));
    assert.equal(await readFrom(fwdA), "");
    // What the tunnel container writes once its routes are in (CLIENT_TUNNEL_SCRIPT).
    fs.writeFileSync(path.join(shared, "routed"), " 127.0.0.1\n");
    await eventually(
      "the forwarder to serve service-a",
      async () => (await readFrom(fwdA)) === "service-a",
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${agentLog}`);
    });
    assert.match(agentLog, new RegExp(`forwarder :${fwdA} -> 127\\.0\\.0\\.1:${backends[0]} started`));
  });

  it("a second connection adds a forwarder and leaves the first one's process alone", async () => {
    const before = forwarderPids();
    publish([
      { listenPort: fwdA, host: "127.0.0.1", port: backends[0]! },
      { listenPort: fwdB, host: "127.0.0.1", port: backends[1]! },
    ]);
    await eventually("the second forwarder", async () => (await readFrom(fwdB)) === "service-b", 30_000);
    assert.equal(await readFrom(fwdA), "service-a");
    assert.deepEqual(forwarderPids().slice(0, 1), before);
  });

  it("a removed connection's forwarder stops; the other keeps serving", async () => {
    publish([{ listenPort: fwdB, host: "127.0.0.1", port: backends[1]! }]);
    await eventually("the first forwarder to stop", async () => (await readFrom(fwdA)) === "", 30_000);
    assert.equal(await readFrom(fwdB), "service-b");
    assert.match(agentLog, new RegExp(`forwarder :${fwdA} -> 127\\.0\\.0\\.1:${backends[0]} stopped`));
  });

  it("a malformed list is ignored whole: nothing of it runs, the last good list keeps serving", async () => {
    publish(
      [{ listenPort: fwdA, host: "127.0.0.1", port: backends[0]! }],
      "forward 1 db.example.test 5432\n",
    );
    await eventually(
      "the agent to say it ignored the list",
      () => /ignoring a malformed forwarder list/.test(agentLog),
      30_000,
    );
    assert.equal(await readFrom(fwdB), "service-b");
    assert.equal(await readFrom(fwdA), "");
  });

  it("an answer cut short (no closing `end`) is ignored: the forwarders keep serving", async () => {
    // A list server whose answer ends early, as a connection cut in the middle would.
    listServer?.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    const short = spawn(
      "socat",
      [`TCP-LISTEN:${cfgPort},fork,reuseaddr,bind=127.0.0.1`, "SYSTEM:echo '# klutch bridge, group g'"],
      { stdio: "ignore" },
    );
    children.push(short);
    try {
      await eventually(
        "the agent to say the list was cut short",
        () => /an incomplete forwarder list .*keeping the last one/.test(agentLog),
        30_000,
      );
      assert.equal(await readFrom(fwdB), "service-b");
    } finally {
      short.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 200));
      listServer = startListServer();
    }
  });

  it("fetches that fail are counted in a row for the tunnel container, and a fetch that works sets the count back to 0", async () => {
    const unreached = path.join(shared, UNREACHED_FILE);
    const count = () => Number(fs.readFileSync(unreached, "utf8").trim());
    assert.equal(count(), 0);
    listServer?.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    try {
      await eventually("two fetches in a row to fail", () => count() >= 2, 30_000);
      // A fetch that failed is not one that was cut short: the forwarders keep serving.
      assert.equal(await readFrom(fwdB), "service-b");
    } finally {
      listServer = startListServer();
    }
    await eventually("a fetch to work again", () => count() === 0, 30_000);
  });

  it("a dead forwarder is restarted on the next round", async () => {
    const [line] = forwarderPids();
    const pid = Number(line?.split(" ")[1]);
    assert.ok(pid > 0);
    spawnSync("kill", ["-9", String(pid)]);
    await eventually("a new forwarder process", () => !forwarderPids().includes(line!), 30_000);
    await eventually(
      "the forwarder to serve again",
      async () => (await readFrom(fwdB)) === "service-b",
      30_000,
    );
  });

  it("no list for this peer any more (its last connection gone): every forwarder stops", async () => {
    fs.rmSync(listFile);
    await eventually("every forwarder to stop", async () => (await readFrom(fwdB)) === "", 30_000);
    assert.deepEqual(forwarderPids(), []);
  });

  it("as a container's first process (PID 1 of its own PID namespace) it stops at once on SIGTERM, as the kubelet asks", async () => {
    // PID 1 of a namespace gets a signal from outside only if it handles it: without its trap, the
    // agent outlived the SIGTERM and the pod waited for the kubelet's SIGKILL after 30 s.
    const own = fs.mkdtempSync(path.join(dir, "pid1-"));
    const init = spawn(
      "unshare",
      [
        "--pid",
        "--fork",
        "/bin/sh",
        "-c",
        clientAgentScript("127.0.0.1", cfgPort, { tmp: own, shared: own }),
      ],
      { detached: true, stdio: "ignore" },
    );
    children.push(init);
    // The namespace's first process is unshare's child: it is what the kubelet's runtime signals.
    let pid1 = 0;
    await eventually("the agent to start in its PID namespace", () => {
      const r = spawnSync("pgrep", ["-P", String(init.pid)], { encoding: "utf8" });
      pid1 = r.status === 0 ? Number(r.stdout.trim().split("\n")[0]) : 0;
      return pid1 > 0;
    });
    await eventually("the agent's first round", () => fs.existsSync(path.join(own, "forwarders.state")));
    process.kill(pid1, "SIGTERM");
    await eventually("the agent to exit on SIGTERM", () => gone(pid1), 5_000);
  });
});
