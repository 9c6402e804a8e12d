import { WireguardPlan } from "./planner";

/**
 * The gateway's packet filter (nftables), the half of the isolation that a client cannot
 * undo: AllowedIPs on the client only decide what it routes into the tunnel, and a client
 * controls its own config. So the gateway admits from the tunnel only the flows of the
 * plan (client tunnel address → its data-service host:port), drops the rest, and keeps
 * the data-service ports unreachable except through the tunnel.
 *
 * The file replaces the whole table atomically (`table` + `delete table` + definition in
 * one `nft -f` transaction), so reloading it adds or removes flows without touching
 * established sessions of flows that stay.
 */

export const NFT_TABLE = "klutch_wireguard";

export interface NftOptions {
  /** The WireGuard interface name on the gateway (wg0 on VMs and pods). */
  interfaceName: string;
  /** Masquerade tunnel traffic leaving to the data-service network, so hosts need no route back. */
  masquerade?: boolean;
  /**
   * The port of the gateway's forwarder-list server (cluster-config.ts): admitted from the
   * tunnel to the gateway's own tunnel address only, dropped from anywhere else.
   */
  configPort?: number;
  /**
   * Files the bridge publishes with each group's flows (`add element` lines), loaded in the
   * same transaction as the table, so a reload never drops a live group's flows.
   */
  include?: string;
}

export function renderGatewayNftables(plan: WireguardPlan, options: NftOptions): string {
  const wg = JSON.stringify(options.interfaceName);
  const flows = plan.gateway.allowedFlows.map((f) => `${f.source} . ${f.host} . ${f.port}`);
  const services = plan.gateway.services.map((s) => `${s.host} . ${s.port}`);
  const set = (name: string, type: string, elements: string[]) => [
    `  set ${name} {`,
    `    type ${type}`,
    ...(elements.length > 0 ? [`    elements = { ${elements.join(", ")} }`] : []),
    "  }",
  ];
  const lines = [
    "# Managed by Pulumi (klutch:network:WireguardTunnel): WireGuard gateway filter.",
    `table inet ${NFT_TABLE}`,
    `delete table inet ${NFT_TABLE}`,
    `table inet ${NFT_TABLE} {`,
    "  # client tunnel address . data-service host . port: the flows the plan allows",
    ...set("flows", "ipv4_addr . ipv4_addr . inet_service", flows),
    "  # data-service host . port: reachable only through the tunnel",
    ...set("services", "ipv4_addr . inet_service", services),
    "",
    "  chain input {",
    "    type filter hook input priority filter; policy accept;",
    `    iifname ${wg} ct state established,related accept`,
    `    iifname ${wg} ip saddr . ip daddr . tcp dport @flows accept`,
    ...(options.configPort !== undefined
      ? [
          `    iifname ${wg} ip daddr ${plan.gateway.tunnelAddress} tcp dport ${options.configPort} accept`,
          `    iifname != { ${wg}, "lo" } tcp dport ${options.configPort} drop`,
        ]
      : []),
    `    iifname ${wg} drop`,
    `    iifname != { ${wg}, "lo" } ip daddr . tcp dport @services drop`,
    "  }",
    "",
    "  chain forward {",
    "    type filter hook forward priority filter; policy accept;",
    `    iifname ${wg} ct state established,related accept`,
    `    iifname ${wg} ip saddr . ip daddr . tcp dport @flows accept`,
    `    iifname ${wg} drop`,
    `    oifname ${wg} ct state established,related accept`,
    `    oifname ${wg} drop`,
    "    # the gateway forwards tunnel traffic only; it is no router for anything else",
    `    iifname != ${wg} oifname != ${wg} drop`,
    "  }",
  ];
  if (options.masquerade) {
    lines.push(
      "",
      "  chain postrouting {",
      "    type nat hook postrouting priority srcnat; policy accept;",
      `    ip saddr ${plan.tunnelCidr} oifname != ${wg} masquerade`,
      "  }",
    );
  }
  lines.push("}");
  if (options.include) lines.push(`include ${JSON.stringify(options.include)}`);
  return `${lines.join("\n")}\n`;
}
