import { assertWireguardKey } from "./keys";
import { GATEWAY, WireguardInterfacePlan, WireguardPlan, ClientPlan } from "./planner";

/**
 * WireGuard configuration files for both ends. Private keys are never part of the plan:
 * callers pass them in, and whatever these functions return then holds a private key,
 * so components must keep the result a secret.
 *
 * Two flavours: wg-quick files (with Address and hooks, for `wg-quick up`) and the
 * `wg setconf`/`wg syncconf` subset, which rejects Address, DNS, Table and the hooks; that
 * subset is what a live reload and the data-plane tests (wireguard-go + `ip addr`) use.
 */

export interface GatewayKeys {
  privateKey: string;
  /** Public key of each app cluster's client, by app cluster name. */
  clientPublicKeys: Readonly<Record<string, string>>;
}

export interface ClientKeys {
  privateKey: string;
  gatewayPublicKey: string;
}

export interface WgQuickOptions {
  /** Commands run after the interface is up (wg-quick only), e.g. loading the nftables rules. */
  postUp?: readonly string[];
  postDown?: readonly string[];
}

const HEADER = "# Managed by Pulumi (klutch:network:WireguardTunnel); changes here are overwritten.";

function render(
  title: string,
  iface: WireguardInterfacePlan,
  privateKey: string,
  peerKeys: (name: string) => string,
  wgQuick: boolean,
  options: WgQuickOptions = {},
): string {
  const lines = [HEADER, `# ${title}`, "[Interface]"];
  if (wgQuick) lines.push(`Address = ${iface.address}`);
  if (iface.listenPort !== undefined) lines.push(`ListenPort = ${iface.listenPort}`);
  lines.push(`PrivateKey = ${privateKey}`);
  if (wgQuick) {
    for (const cmd of options.postUp ?? []) lines.push(`PostUp = ${cmd}`);
    for (const cmd of options.postDown ?? []) lines.push(`PostDown = ${cmd}`);
  }
  for (const peer of iface.peers) {
    lines.push("", `# ${peer.name === GATEWAY ? "gateway" : `app cluster ${peer.name}`}`, "[Peer]");
    lines.push(`PublicKey = ${peerKeys(peer.name)}`);
    if (peer.endpoint) lines.push(`Endpoint = ${peer.endpoint}`);
    lines.push(`AllowedIPs = ${peer.allowedIps.join(", ")}`);
    if (peer.persistentKeepalive) lines.push(`PersistentKeepalive = ${peer.persistentKeepalive}`);
  }
  return `${lines.join("\n")}\n`;
}

function gatewayPeerKey(keys: GatewayKeys): (name: string) => string {
  return (name) => {
    const key = keys.clientPublicKeys[name];
    assertWireguardKey(key, `clientPublicKeys.${name}`);
    return key;
  };
}

function client(plan: WireguardPlan, appCluster: string): ClientPlan {
  const found = plan.clients.find((c) => c.appCluster === appCluster);
  if (!found) {
    throw new Error(
      `appCluster ${JSON.stringify(appCluster)} has no client in this plan (app clusters: ${plan.clients.map((c) => c.appCluster).join(", ") || "none"})`,
    );
  }
  return found;
}

function renderGateway(plan: WireguardPlan, keys: GatewayKeys, wgQuick: boolean, options?: WgQuickOptions) {
  assertWireguardKey(keys.privateKey, "gateway privateKey");
  return render(
    `gateway, tunnel ${plan.tunnelCidr}`,
    plan.gateway.interface,
    keys.privateKey,
    gatewayPeerKey(keys),
    wgQuick,
    options,
  );
}

function renderClient(plan: WireguardPlan, appCluster: string, keys: ClientKeys, wgQuick: boolean) {
  const c = client(plan, appCluster);
  assertWireguardKey(keys.privateKey, `${appCluster} client privateKey`);
  assertWireguardKey(keys.gatewayPublicKey, "gatewayPublicKey");
  return render(
    `client of app cluster ${appCluster}`,
    c.interface,
    keys.privateKey,
    () => keys.gatewayPublicKey,
    wgQuick,
  );
}

/** The gateway's wg-quick file (holds the gateway private key: keep it secret). */
export function renderGatewayWgQuick(
  plan: WireguardPlan,
  keys: GatewayKeys,
  options?: WgQuickOptions,
): string {
  return renderGateway(plan, keys, true, options);
}

/** The gateway's `wg setconf` file (holds the gateway private key: keep it secret). */
export function renderGatewaySetconf(plan: WireguardPlan, keys: GatewayKeys): string {
  return renderGateway(plan, keys, false);
}

/** An app cluster client's wg-quick file (holds its private key: keep it secret). */
export function renderClientWgQuick(plan: WireguardPlan, appCluster: string, keys: ClientKeys): string {
  return renderClient(plan, appCluster, keys, true);
}

/** An app cluster client's `wg setconf` file (holds its private key: keep it secret). */
export function renderClientSetconf(plan: WireguardPlan, appCluster: string, keys: ClientKeys): string {
  return renderClient(plan, appCluster, keys, false);
}
