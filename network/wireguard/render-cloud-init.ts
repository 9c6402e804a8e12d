import { stringify } from "yaml";
import { WireguardPlan } from "./planner";
import { NFT_TABLE, renderGatewayNftables } from "./render-nftables";
import { GatewayKeys, renderGatewayWgQuick } from "./render-wg-quick";

/**
 * cloud-init user data for a gateway VM in the data-service network. It carries the
 * gateway's private key inside wg0.conf, so the result is a secret.
 *
 * The filter is loaded by wg-quick's PostUp rather than by a separate unit: the rules name
 * the interface, and tying them to `wg-quick@wg0` means they come back on every boot and
 * every restart of the tunnel, in the right order.
 */

const WG_CONF = "/etc/wireguard/wg0.conf";
const NFT_FILE = "/etc/klutch/wireguard.nft";
const SYSCTL_FILE = "/etc/sysctl.d/90-klutch-wireguard.conf";

export function renderGatewayCloudInit(plan: WireguardPlan, keys: GatewayKeys): string {
  const wgConf = renderGatewayWgQuick(plan, keys, {
    postUp: [`nft -f ${NFT_FILE}`],
    postDown: [`nft delete table inet ${NFT_TABLE}`],
  });
  const config = {
    package_update: true,
    packages: ["wireguard", "wireguard-tools", "nftables"],
    write_files: [
      {
        path: SYSCTL_FILE,
        owner: "root:root",
        permissions: "0644",
        content: "net.ipv4.ip_forward = 1\n",
      },
      {
        path: NFT_FILE,
        owner: "root:root",
        permissions: "0644",
        content: renderGatewayNftables(plan, { interfaceName: "wg0", masquerade: true }),
      },
      { path: WG_CONF, owner: "root:root", permissions: "0600", content: wgConf },
    ],
    runcmd: [
      ["sysctl", "--load", SYSCTL_FILE],
      ["systemctl", "enable", "--now", "wg-quick@wg0"],
    ],
  };
  return `#cloud-config\n${stringify(config, { lineWidth: 0 })}`;
}
