import * as fs from "node:fs";
import * as path from "node:path";
import type { PathHealth } from "../../contract/implementation";
import { pathId, type NetworkPathObject } from "../../../lib/bridge/model";
import { LOCAL_DATA_NETNS_ENV, localGatewayNames, localNames } from "../model/local-plan";
import { clientPidFile } from "./client-provider";
import { SOCAT, forwarderPidFile } from "./forwarder-provider";
import { gatewayPidFile } from "./gateway";
import { runningPid } from "./process-supervision";
import { wireguardGoRunning } from "./wireguard-go";

/**
 * The local target's WireGuard paths (no pods, this machine's processes), read by the bridge's
 * health poll between runs: each path's socat forwarder, its group's client wireguard-go and the
 * shared gateway's, each alive by the pid file its provider keeps (process-supervision.ts). A
 * path whose forwarder has no pid file has not been realised here (or failed to listen, which
 * its run reports): nothing is said of it. A dead process makes the path not Ready, naming it;
 * the change starts a run of the group, whose diffs count a dead process a change
 * (forwarder-provider.ts, client-provider.ts), so the run starts it again with the same key,
 * address and port. Before, between runs nothing looked, and a path stayed Ready while it
 * refused connections.
 */
export function localWireguardHealth(
  group: string,
  stateDir: string,
  live: readonly NetworkPathObject[],
  dataNetns = process.env[LOCAL_DATA_NETNS_ENV],
): Record<string, PathHealth> {
  if (!dataNetns) return {};
  const gateway = localGatewayNames(stateDir, dataNetns);
  const netns = localNames(group).netns;
  const gatewayFile = gatewayPidFile({ gatewayDir: gateway.dir });
  const clientFile = clientPidFile({ gatewayDir: gateway.dir, netns });
  const tunnel = !wireguardGoRunning(gatewayFile)
    ? {
        reason: "GatewayUnavailable",
        message: `the local WireGuard gateway's wireguard-go (pid file ${gatewayFile}) is not running`,
      }
    : !wireguardGoRunning(clientFile)
      ? {
          reason: "TunnelUnavailable",
          message: `the WireGuard client of ${group} (wireguard-go in ${netns}, pid file ${clientFile}) is not running`,
        }
      : undefined;
  const out: Record<string, PathHealth> = {};
  for (const p of live) {
    const id = pathId(p);
    // The forwarders' directory as the bridge program gives it (bridge-program.ts).
    const forwarderFile = forwarderPidFile({ dir: path.join(gateway.dir, "forwarders"), netns, name: id });
    if (!fs.existsSync(forwarderFile)) continue;
    const forwarder =
      runningPid(forwarderFile, SOCAT) === undefined
        ? {
            reason: "ForwarderFailed",
            message: `the forwarder of ${id} (socat in ${netns}, pid file ${forwarderFile}) is not running`,
          }
        : undefined;
    const problem = tunnel ?? forwarder;
    out[id] = problem
      ? { ready: false, ...problem, message: `${problem.message}; the bridge starts it again` }
      : {
          ready: true,
          reason: "ConnectivityEstablished",
          message: `the forwarder and the tunnel to ${p.spec.instanceHost}:${p.spec.port} run`,
        };
  }
  return out;
}
