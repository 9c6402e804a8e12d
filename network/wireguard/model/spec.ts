import type { ImplementationSpec } from "../../contract/implementation";
import { checkWireguard } from "./checks";
import { wireguardConnector } from "./config";

/** The implementation as the registry (network/registry.ts) lists it. */
export const wireguard: ImplementationSpec<"wireguard", typeof wireguardConnector> = {
  name: "wireguard",
  // The tunnel is the environment stack's; the bridge realises a forwarder per connection
  // and the gateway's allowed hosts (network/wireguard/bridge-program.ts).
  realisation: "forwarded",
  summary:
    "a WireGuard tunnel from each app cluster to a gateway in the data-service network; consumers dial a forwarder in their own cluster",
  schema: wireguardConnector,
  check: checkWireguard,
};
