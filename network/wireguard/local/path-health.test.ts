import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { networkPath } from "../../../test/helpers/network-path";
import { pathId } from "../../../lib/bridge/model";
import { localGatewayNames, localNames } from "../model/local-plan";
import { localWireguardHealth } from "./path-health";

const GROUP = "team-a";
const DATA_NETNS = "kds-test";

describe("the local WireGuard paths' health (their processes, by pid file)", () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-health-"));
  const gateway = localGatewayNames(stateDir, DATA_NETNS);
  const netns = localNames(GROUP).netns;
  const orders = networkPath("orders", { spec: { implementation: "wireguard" } });
  const billing = networkPath("billing", { spec: { implementation: "wireguard" } });
  const unrealised = networkPath("new", { spec: { implementation: "wireguard" } });
  const children: ChildProcess[] = [];

  /**
   * A real process whose command line is `program`'s, as the providers' pid files name them.
   * Its pid file is written once bash has exec'd: before, the command line is still bash's, and
   * a health read in that window found the process not running (seen once in CI).
   */
  const daemon = async (program: string, pidFile: string): Promise<ChildProcess> => {
    const child = spawn("bash", ["-c", `exec -a ${program} sleep 300`], { stdio: "ignore" });
    children.push(child);
    const argv0 = () => fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0")[0];
    for (let i = 0; i < 200 && argv0() !== program; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(argv0(), program, `pid ${child.pid} never exec'd ${program}`);
    fs.writeFileSync(pidFile, `${child.pid}\n`);
    return child;
  };
  const stop = async (child: ChildProcess) => {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  };
  const forwarderFile = (p: typeof orders) =>
    path.join(gateway.dir, "forwarders", `${netns}-${pathId(p)}.pid`);
  const health = () => localWireguardHealth(GROUP, stateDir, [orders, billing, unrealised], DATA_NETNS);

  let gatewayGo: ChildProcess;
  let clientGo: ChildProcess;
  let ordersForwarder: ChildProcess;
  before(async () => {
    fs.mkdirSync(path.join(gateway.dir, "forwarders"), { recursive: true });
    gatewayGo = await daemon("wireguard-go", path.join(gateway.dir, "gateway.pid"));
    clientGo = await daemon("wireguard-go", path.join(gateway.dir, `${netns}.pid`));
    ordersForwarder = await daemon("socat", forwarderFile(orders));
    await daemon("socat", forwarderFile(billing));
  });
  after(() => {
    for (const c of children) c.kill("SIGKILL");
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("every realised path is Ready while its forwarder, its client and the gateway run; one not realised here is not judged", () => {
    const h = health();
    assert.deepEqual(Object.keys(h).sort(), [pathId(billing), pathId(orders)].sort());
    assert.ok(Object.values(h).every((x) => x.ready && x.reason === "ConnectivityEstablished"));
  });

  it("a dead forwarder makes its own path not Ready, naming it; the other stays Ready", async () => {
    await stop(ordersForwarder);
    const h = health();
    assert.equal(h[pathId(orders)]?.ready, false);
    assert.equal(h[pathId(orders)]?.reason, "ForwarderFailed");
    assert.match(
      h[pathId(orders)]!.message,
      new RegExp(`the forwarder of ${pathId(orders)} \\(socat in ${netns}`),
    );
    assert.equal(h[pathId(billing)]?.ready, true);
  });

  it("a dead client wireguard-go makes every path of its group not Ready (TunnelUnavailable)", async () => {
    await stop(clientGo);
    const h = health();
    assert.deepEqual(
      Object.values(h).map((x) => x.reason),
      ["TunnelUnavailable", "TunnelUnavailable"],
    );
  });

  it("a dead gateway outranks the rest (GatewayUnavailable)", async () => {
    await stop(gatewayGo);
    assert.ok(Object.values(health()).every((x) => !x.ready && x.reason === "GatewayUnavailable"));
  });

  it("says nothing without the data-service network namespace, where no local path can run", () => {
    assert.deepEqual(localWireguardHealth(GROUP, stateDir, [orders], ""), {});
  });
});
