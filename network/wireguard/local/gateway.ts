import { generateKeyPairSync } from "node:crypto";
import * as fs from "node:fs";
import { inNs } from "./commands";
import { claimed } from "./gateway-claims";
import { writeSecretFile } from "./secret-file";
import type { LocalGatewayInputs } from "./types";
import { ensureWireguardGo, stopWireguardGo, wireguardGoRunning } from "./wireguard-go";

/**
 * The gateway all groups share: one wireguard-go interface in the data-service namespace, its
 * key in a 0600 file, the rendered nftables table. The first client starts it and the last one
 * stops it; both run under the gateway lock (withGatewayLock).
 */

/** The pid file of the gateway's wireguard-go. */
export function gatewayPidFile(g: Pick<LocalGatewayInputs, "gatewayDir">): string {
  return `${g.gatewayDir}/gateway.pid`;
}

/**
 * The gateway's private key file, made on first use. The gateway is shared by every group's
 * stack, so its key cannot live in one of them: it is made here (X25519, as the key provider
 * makes them) and kept in a 0600 file.
 */
function ensureGatewayKey(g: LocalGatewayInputs): string {
  fs.mkdirSync(g.gatewayDir, { recursive: true, mode: 0o700 });
  const keyFile = `${g.gatewayDir}/private.key`;
  if (!fs.existsSync(keyFile)) {
    const { privateKey } = generateKeyPairSync("x25519");
    const raw = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32).toString("base64");
    writeSecretFile(keyFile, `${raw}\n`);
  }
  return keyFile;
}

/** Starts the shared gateway unless it runs; returns its public key. Call under the lock. */
export function gatewayUp(g: LocalGatewayInputs): string {
  const keyFile = ensureGatewayKey(g);
  const started = ensureWireguardGo(
    g.dataNetns,
    g.gatewayIfname,
    gatewayPidFile(g),
    `${g.gatewayDir}/gateway.log`,
  );
  if (started) {
    inNs(g.dataNetns, [
      "wg",
      "set",
      g.gatewayIfname,
      "listen-port",
      String(g.listenPort),
      "private-key",
      keyFile,
    ]);
    inNs(g.dataNetns, ["ip", "addr", "replace", g.gatewayAddress, "dev", g.gatewayIfname]);
    inNs(g.dataNetns, ["ip", "link", "set", g.gatewayIfname, "up"]);
    // A new gateway has no peers and no flows: the clients' and allowed hosts' diffs see
    // that and put theirs back on the next update.
    inNs(g.dataNetns, ["nft", "-f", "-"], { input: g.gatewayFilter });
  }
  return inNs(g.dataNetns, ["wg", "show", g.gatewayIfname, "public-key"]).trim();
}

/** Whether the gateway's wireguard-go runs. */
export function gatewayRunning(g: Pick<LocalGatewayInputs, "gatewayDir">): boolean {
  return wireguardGoRunning(gatewayPidFile(g));
}

/** The public keys of the gateway's peers; none while it does not run. */
export function gatewayPeers(g: LocalGatewayInputs): string[] {
  const out = inNs(g.dataNetns, ["wg", "show", g.gatewayIfname, "peers"], { allowFail: true });
  return out.split("\n").filter(Boolean);
}

/** Stops the gateway when no client holds an address any more. Call under the lock. */
export function gatewayDown(g: LocalGatewayInputs): void {
  if (claimed(g.gatewayDir, "addresses").length > 0) return;
  stopWireguardGo(gatewayPidFile(g));
  inNs(g.dataNetns, ["nft", "delete", "table", "inet", g.nftTable], { allowFail: true });
}
