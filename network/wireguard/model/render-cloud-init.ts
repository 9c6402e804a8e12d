import { stringify } from "yaml";
import { WireguardPlan } from "./planner";
import { NFT_TABLE, renderGatewayNftables } from "./render-nftables";
import { GatewayKeys, renderGatewayWgQuick } from "./render-wg-quick";
import { FLOWS_DIR, FLOWS_INCLUDE, configServerArgs } from "./cluster-config";
import { FLOWS_SYNC_SCRIPT, type FlowsReaderAccess } from "./flows-sync";

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

/**
 * With `flows` (the bridge's connections, cluster-config.ts): the VM also reads the flows
 * ConfigMap from the control plane (flows-sync.ts; its token is in this user data, which is
 * why the whole of it is a secret), includes the flows in its filter and serves each client its
 * forwarder list on `configPort`, as the gateway pod does.
 */
export interface GatewayVmFlows extends FlowsReaderAccess {
  configPort: number;
}

const FLOWS_READER_DIR = "/etc/klutch/flows-reader";
const FLOWS_SYNC = "/usr/local/lib/klutch/flows-sync.py";

export function renderGatewayCloudInit(
  plan: WireguardPlan,
  keys: GatewayKeys,
  flows?: GatewayVmFlows,
  /** False when the image has the packages already (no mirror to reach). */
  installPackages = true,
): string {
  const wgConf = renderGatewayWgQuick(plan, keys, {
    postUp: [`nft -f ${NFT_FILE}`],
    postDown: [`nft delete table inet ${NFT_TABLE}`],
  });
  const rules = renderGatewayNftables(plan, {
    interfaceName: "wg0",
    masquerade: true,
    ...(flows ? { configPort: flows.configPort, include: FLOWS_INCLUDE } : {}),
  });
  const file = (path: string, permissions: string, content: string) => ({
    path,
    owner: "root:root",
    permissions,
    content,
  });
  const flowFiles = flows
    ? [
        file(`${FLOWS_READER_DIR}/ca.crt`, "0644", flows.caPem),
        file(`${FLOWS_READER_DIR}/token`, "0600", `${flows.token}\n`),
        file(FLOWS_SYNC, "0755", FLOWS_SYNC_SCRIPT),
        file(
          "/etc/systemd/system/klutch-flows-sync.service",
          "0644",
          unit("Klutch: the bridge's WireGuard flows from the control plane", [
            `ExecStart=/usr/bin/python3 ${FLOWS_SYNC} --server ${flows.server} --namespace ${flows.namespace} --name ${flows.name} --ca-file ${FLOWS_READER_DIR}/ca.crt --token-file ${FLOWS_READER_DIR}/token --dir ${FLOWS_DIR} --reload "nft -f ${NFT_FILE}"`,
          ]),
        ),
        file(
          "/etc/systemd/system/klutch-forwarder-lists.service",
          "0644",
          unit("Klutch: each WireGuard client's forwarder list, through the tunnel", [
            "User=nobody",
            // systemd expands $VAR in ExecStart: $$ keeps socat's variable for its shell.
            `ExecStart=/usr/bin/socat ${configServerArgs(flows.configPort)
              .map((a) => `'${a.replace(/\$/g, "$$$$")}'`)
              .join(" ")}`,
          ]),
        ),
      ]
    : [];
  const config = {
    ...(installPackages
      ? {
          package_update: true,
          packages: ["wireguard", "wireguard-tools", "nftables", ...(flows ? ["socat", "python3"] : [])],
        }
      : {}),
    write_files: [
      file(SYSCTL_FILE, "0644", "net.ipv4.ip_forward = 1\n"),
      file(NFT_FILE, "0644", rules),
      file(WG_CONF, "0600", wgConf),
      ...flowFiles,
    ],
    runcmd: [
      ["sysctl", "--load", SYSCTL_FILE],
      // The flows directory exists before the filter that includes it loads.
      ...(flows ? [["mkdir", "-p", FLOWS_DIR]] : []),
      ["systemctl", "enable", "--now", "wg-quick@wg0"],
      ...(flows ? [["systemctl", "enable", "--now", "klutch-flows-sync", "klutch-forwarder-lists"]] : []),
    ],
  };
  return `#cloud-config\n${stringify(config, { lineWidth: 0 })}`;
}

/** A systemd unit that restarts its program, whatever stops it. */
function unit(description: string, service: string[]): string {
  return [
    "[Unit]",
    `Description=${description}`,
    "After=network-online.target wg-quick@wg0.service",
    "",
    "[Service]",
    ...service,
    "Restart=always",
    "RestartSec=5",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
}
