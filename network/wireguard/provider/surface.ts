import type { ProviderSurface } from "../../contract/provider-surface";
import { wireguardConstructors } from "./construct";
import { wireguardComponents, wireguardTypes } from "./schema";

/** What this implementation serves through the klutch provider (its spec's `pulumi.provider`). */
export const providerSurface: ProviderSurface = {
  types: wireguardTypes,
  components: wireguardComponents,
  constructors: wireguardConstructors,
};
