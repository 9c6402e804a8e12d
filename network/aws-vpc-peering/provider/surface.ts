import type { ProviderSurface } from "../../contract/provider-surface";
import { awsVpcPeeringConstructors } from "./construct";
import { awsVpcPeeringComponents, awsVpcPeeringConnectorFields, awsVpcPeeringTypes } from "./schema";

/** What this implementation serves through the klutch provider (its spec's `pulumi.provider`). */
export const providerSurface: ProviderSurface = {
  types: awsVpcPeeringTypes,
  components: awsVpcPeeringComponents,
  constructors: awsVpcPeeringConstructors,
  connectorFields: awsVpcPeeringConnectorFields,
};
