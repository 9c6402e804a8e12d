import type { ProviderSurface } from "../../contract/provider-surface";
import { openstackConstructors } from "./construct";
import { openstackComponents, openstackConnectorFields, openstackTypes } from "./schema";

/** What this implementation serves through the klutch provider (its spec's `pulumi.provider`). */
export const providerSurface: ProviderSurface = {
  types: openstackTypes,
  components: openstackComponents,
  constructors: openstackConstructors,
  connectorFields: openstackConnectorFields,
};
