import * as fs from "node:fs";
import { clientTunnelAddresses, linkAddresses, linkSlots } from "./addressing";
import { inNs, sh } from "./commands";
import { gatewayDown, gatewayPeers, gatewayRunning, gatewayUp } from "./gateway";
import { claim, isClaimed, release, withGatewayLock } from "./gateway-claims";
import { killQuietly, namespacePids } from "./process-supervision";
import { writeSecretFile } from "./secret-file";
import type { CompleteProvider, LocalWireguardClientInputs, LocalWireguardClientOutputs } from "./types";
import { ensureWireguardGo, stopWireguardGo, wireguardGoRunning, wireguardSocket } from "./wireguard-go";

/**
 * The provider of `LocalWireguardClient`, one per group (an app cluster's consumer namespace):
 * a network namespace for the app side, a veth link to the data-service namespace, wireguard-go
 * with the key pair from the key provider, and its peer on the shared gateway (gateway.ts).
 */

/** The client end of every veth link, inside the client's namespace. */
const CLIENT_LINK = "kw0";

export function clientPidFile(c: Pick<LocalWireguardClientInputs, "gatewayDir" | "netns">): string {
  return `${c.gatewayDir}/${c.netns}.pid`;
}

function clientLogFile(c: Pick<LocalWireguardClientInputs, "gatewayDir" | "netns">): string {
  return `${c.gatewayDir}/${c.netns}.log`;
}

/** The client's namespace and its veth link to the data-service namespace, addressed. */
function ensureNamespaceAndLink(
  i: LocalWireguardClientInputs,
  addr: { gateway: string; client: string },
): void {
  const namespaces = sh(["ip", "netns", "list"]);
  if (!new RegExp(`^${i.netns}( |$)`, "m").test(namespaces)) sh(["ip", "netns", "add", i.netns]);
  inNs(i.netns, ["ip", "link", "set", "lo", "up"]);
  const hasLink = inNs(i.netns, ["ip", "link", "show", CLIENT_LINK], { allowFail: true }) !== "";
  if (!hasLink) {
    inNs(i.dataNetns, ["ip", "link", "del", i.linkIfname], { allowFail: true });
    sh([
      "ip",
      "link",
      "add",
      CLIENT_LINK,
      "netns",
      i.netns,
      "type",
      "veth",
      "peer",
      "name",
      i.linkIfname,
      "netns",
      i.dataNetns,
    ]);
  }
  inNs(i.netns, ["ip", "addr", "replace", `${addr.client}/30`, "dev", CLIENT_LINK]);
  inNs(i.netns, ["ip", "link", "set", CLIENT_LINK, "up"]);
  inNs(i.dataNetns, ["ip", "addr", "replace", `${addr.gateway}/30`, "dev", i.linkIfname]);
  inNs(i.dataNetns, ["ip", "link", "set", i.linkIfname, "up"]);
}

/**
 * Gives the client its key and the gateway as its peer. Only the gateway's /32 is added to the
 * AllowedIPs here: the allowed hosts resource adds the data-service hosts (`wg set` keeps what
 * it does not name, so neither overwrites the other's work).
 */
function configureClientPeer(
  i: LocalWireguardClientInputs,
  gatewayPublicKey: string,
  endpoint: string,
  gatewayTunnel: string,
): void {
  const keyFile = `${i.gatewayDir}/${i.netns}.key`;
  writeSecretFile(keyFile, `${i.privateKey}\n`);
  try {
    const current = inNs(i.netns, ["wg", "show", i.ifname, "allowed-ips"], { allowFail: true });
    const kept = (current.split("\t")[1] ?? "")
      .trim()
      .split(/\s+/)
      .filter((a) => a && a !== "(none)");
    const allowed = [...new Set([`${gatewayTunnel}/32`, ...kept])].join(",");
    inNs(i.netns, [
      "wg",
      "set",
      i.ifname,
      "private-key",
      keyFile,
      "peer",
      gatewayPublicKey,
      "endpoint",
      endpoint,
      "allowed-ips",
      allowed,
      "persistent-keepalive",
      "25",
    ]);
  } finally {
    fs.rmSync(keyFile, { force: true });
  }
}

/** Brings the client (and, if needed, the gateway) up, or heals it in place, keeping its claims. */
function clientUp(i: LocalWireguardClientInputs): LocalWireguardClientOutputs {
  return withGatewayLock(i.gatewayDir, () => {
    const gatewayPublicKey = gatewayUp(i);
    const tunnelAddress = claim(i.gatewayDir, "addresses", clientTunnelAddresses(i.tunnelCidr), i.group);
    const link = claim(i.gatewayDir, "links", linkSlots(i.linkBase, i.linkCount), i.group);
    const addr = linkAddresses(link, i.linkBase);
    ensureNamespaceAndLink(i, addr);
    ensureWireguardGo(i.netns, i.ifname, clientPidFile(i), clientLogFile(i));
    // The gateway learns the peer first: the client's first handshake (sent as soon as it
    // has a peer with a keepalive) is answered instead of dropped and retried 5 s later.
    inNs(i.dataNetns, [
      "wg",
      "set",
      i.gatewayIfname,
      "peer",
      i.publicKey,
      "allowed-ips",
      `${tunnelAddress}/32`,
    ]);
    const endpoint = `${addr.gateway}:${i.listenPort}`;
    const gatewayTunnel = i.gatewayAddress.split("/")[0] ?? "";
    configureClientPeer(i, gatewayPublicKey, endpoint, gatewayTunnel);
    inNs(i.netns, ["ip", "addr", "replace", `${tunnelAddress}/32`, "dev", i.ifname]);
    inNs(i.netns, ["ip", "link", "set", i.ifname, "up"]);
    inNs(i.netns, ["ip", "route", "replace", `${gatewayTunnel}/32`, "dev", i.ifname]);
    return { ...i, tunnelAddress, gatewayPublicKey, endpoint };
  });
}

/** Whether both daemons run, the address is still claimed and the gateway still has the peer. */
function clientHealthy(o: LocalWireguardClientOutputs): boolean {
  if (!wireguardGoRunning(clientPidFile(o))) return false;
  if (!gatewayRunning(o)) return false;
  if (!isClaimed(o.gatewayDir, "addresses", o.tunnelAddress)) return false;
  return gatewayPeers(o).includes(o.publicKey);
}

/** Removes the client, its namespace and claims; stops the gateway after the last client. */
function clientDown(props: LocalWireguardClientOutputs): void {
  withGatewayLock(props.gatewayDir, () => {
    inNs(props.dataNetns, ["wg", "set", props.gatewayIfname, "peer", props.publicKey, "remove"], {
      allowFail: true,
    });
    stopWireguardGo(clientPidFile(props));
    fs.rmSync(wireguardSocket(props.ifname), { force: true });
    // The namespace is this client's alone: whatever still runs there (a forwarder whose pid
    // file was lost) goes with it rather than outliving it unreachable.
    for (const pid of namespacePids(props.netns)) killQuietly(pid);
    // Deleting the namespace deletes the link, both ends.
    sh(["ip", "netns", "del", props.netns], { allowFail: true });
    inNs(props.dataNetns, ["ip", "link", "del", props.linkIfname], { allowFail: true });
    release(props.gatewayDir, "addresses", props.group);
    release(props.gatewayDir, "links", props.group);
    fs.rmSync(clientLogFile(props), { force: true });
    gatewayDown(props);
  });
}

/** Inputs whose change makes a new client (new namespace, interface or gateway). */
const REPLACING_INPUTS = ["netns", "ifname", "linkIfname", "dataNetns", "gatewayDir", "tunnelCidr"] as const;

export const localWireguardClientProvider: CompleteProvider<
  LocalWireguardClientInputs,
  LocalWireguardClientOutputs,
  "diff" | "update" | "read" | "delete"
> = {
  create(inputs) {
    const outs = clientUp(inputs);
    return Promise.resolve({ id: `${inputs.dataNetns}/${inputs.netns}`, outs });
  },

  diff(_id, olds, news) {
    const replaces = REPLACING_INPUTS.filter((k) => olds[k] !== news[k]);
    if (replaces.length > 0) return Promise.resolve({ changes: true, replaces, deleteBeforeReplace: true });
    // A dead wireguard-go (reboot, kill) or a gateway that lost this peer is a change: the
    // update heals it with the same key and address, so every `up` repairs the path.
    const changed =
      olds.privateKey !== news.privateKey ||
      olds.publicKey !== news.publicKey ||
      olds.listenPort !== news.listenPort ||
      olds.gatewayFilter !== news.gatewayFilter ||
      !clientHealthy(olds);
    return Promise.resolve({ changes: changed });
  },

  update(_id, olds, news) {
    return Promise.resolve({ outs: clientUp({ ...news, group: olds.group }) });
  },

  read(id, props) {
    // An unhealthy client is kept (its address claim and key stay valid): the next diff sees
    // it and the update heals it in place, rather than a re-create with a new address.
    return Promise.resolve({ id, props });
  },

  delete(_id, props) {
    clientDown(props);
    return Promise.resolve();
  },
};
