import type { ProviderSurface } from "../../contract/provider-surface";
import { wireguardKeyProvider } from "../key-provider";
import { localAllowedHostsProvider } from "../local/allowed-hosts-provider";
import { localWireguardClientProvider } from "../local/client-provider";
import { localTcpForwarderProvider } from "../local/forwarder-provider";
import { wireguardConstructors } from "./construct";
import { wireguardComponents, wireguardConnectorFields, wireguardTypes } from "./schema";

/** What this implementation serves through the klutch provider (its spec's `pulumi.provider`). */
export const providerSurface: ProviderSurface = {
  types: wireguardTypes,
  components: wireguardComponents,
  constructors: wireguardConstructors,
  connectorFields: wireguardConnectorFields,
  resources: {
    WireguardKeyPair: wireguardKeyProvider,
    LocalWireguardClient: localWireguardClientProvider,
    LocalWireguardAllowedHosts: localAllowedHostsProvider,
    LocalTcpForwarder: localTcpForwarderProvider,
  },
};
