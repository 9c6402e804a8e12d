import type { ProviderSurface } from "../../contract/provider-surface";
import { localHaproxyProvider } from "../local-haproxy";
import { portAllocationProvider } from "../port-allocation";
import { serviceListenersProvider } from "../service-listeners";
import { proxyConstructors } from "./construct";
import { proxyComponents, proxyConnectorFields, proxyTypes } from "./schema";

/** What this implementation serves through the klutch provider (its spec's `pulumi.provider`). */
export const providerSurface: ProviderSurface = {
  types: proxyTypes,
  components: proxyComponents,
  constructors: proxyConstructors,
  connectorFields: proxyConnectorFields,
  resources: {
    LocalHaproxy: localHaproxyProvider,
    PortAllocation: portAllocationProvider,
    ServiceListeners: serviceListenersProvider,
  },
};
