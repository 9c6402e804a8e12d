/* eslint-disable @typescript-eslint/no-require-imports -- the Pulumi side, loaded when asked (implementation.ts) */
import type { GroupProgram } from "../../contract/bridge-target";
import type { ProviderSurface } from "../../contract/provider-surface";
import type { EnvironmentPart } from "../../contract/environment-context";
import type { WireguardConnectorConfig } from "./config";
import type { HealthReader, HealthReaderOptions, ImplementationSpec } from "../../contract/implementation";
import { checkWireguard } from "./checks";
import { wireguardConnector } from "./config";
import { planWireguardGroup } from "./group-plan";
import { wireguardSettings, type WireguardSettings } from "./settings";

/** The implementation as the registry (network/registry.ts) lists it. */
export const wireguard: ImplementationSpec<"wireguard", typeof wireguardConnector, typeof wireguardSettings> =
  {
    name: "wireguard",
    // The tunnel is the environment stack's; the bridge realises a forwarder per connection
    // and the gateway's allowed hosts (network/wireguard/bridge-program.ts).
    realisation: "forwarded",
    summary:
      "a WireGuard tunnel from each app cluster to a gateway in the data-service network; consumers dial a forwarder in their own cluster",
    schema: wireguardConnector,
    check: checkWireguard,
    // Known once the environment planned the tunnel (environment.ts wireguardEnvironmentPart).
    bridgeSettings: { schema: wireguardSettings },
    // The bridge program's own planner (bridge-program.ts runs the same).
    planEndpoints: ({ group, paths, target }) =>
      planWireguardGroup(
        group,
        paths,
        target.kind === "local"
          ? { kind: "local" }
          : { kind: "kubernetes", settings: target.settings as WireguardSettings | undefined },
      ),
    // The health reader reads each path's instance Service and its endpoints, as the proxy's does.
    needsInstanceReads: () => true,
    pulumi: {
      environment: () =>
        (require("../environment") as { wireguardEnvironmentPart: EnvironmentPart<WireguardConnectorConfig> })
          .wireguardEnvironmentPart,
      bridge: () => (require("../bridge-program") as { wireguardProgram: GroupProgram }).wireguardProgram,
      provider: () =>
        (require("../provider/surface") as { providerSurface: ProviderSurface }).providerSurface,
      // On a cluster, the gateway's pods: every path is unusable while none serves; on this
      // machine, the tunnel's and each forwarder's process.
      health: () =>
        (require("../path-health") as { wireguardHealthReader: (o: HealthReaderOptions) => HealthReader })
          .wireguardHealthReader,
    },
  };
