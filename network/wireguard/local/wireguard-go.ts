import * as fs from "node:fs";
import { runningPid, startDetached, stopDaemon } from "./process-supervision";
import { waitUntil } from "./wait";

/**
 * wireguard-go interfaces, the gateway's and each client's: one daemon per interface, answering
 * `wg` on its UAPI socket.
 */

/** What a wireguard-go pid file may name: the daemons this runtime starts. */
const LOCAL_DAEMON = /wireguard-go|socat/;

/** The UAPI socket wireguard-go creates for `ifname`, through which `wg` configures it. */
export function wireguardSocket(ifname: string): string {
  return `/var/run/wireguard/${ifname}.sock`;
}

/** Whether the interface's daemon runs under this pid file. */
export function wireguardGoRunning(pidFile: string): boolean {
  return runningPid(pidFile, LOCAL_DAEMON) !== undefined;
}

/** Stops the interface's daemon (SIGTERM, SIGKILL after 3 s) and removes its pid file. */
export function stopWireguardGo(pidFile: string): void {
  stopDaemon(pidFile, LOCAL_DAEMON, { processGroup: false, killAfterMs: 3000 });
}

/**
 * Starts wireguard-go for `ifname` in `ns` unless it runs and answers on its socket; returns
 * whether it was started, when the caller must configure the new, empty interface.
 */
export function ensureWireguardGo(ns: string, ifname: string, pidFile: string, logFile: string): boolean {
  const sock = wireguardSocket(ifname);
  if (wireguardGoRunning(pidFile) && fs.existsSync(sock)) return false;
  stopWireguardGo(pidFile);
  fs.rmSync(sock, { force: true });
  const argv = ["wireguard-go", "-f", ifname];
  startDetached({ ns, argv, pidFile, logFile, what: argv.join(" ") });
  waitUntil(`wireguard-go ${ifname}`, () => fs.existsSync(sock), 5000);
  return true;
}
