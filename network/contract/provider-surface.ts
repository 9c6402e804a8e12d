import type * as pulumi from "@pulumi/pulumi";
import type { Constructor } from "../../provider-kit/construct";
import type { ComponentSpec, ObjectType } from "../../provider-kit/schema-model";

/**
 * The components an implementation serves through the klutch provider (provider/catalog.ts
 * puts them into schema.json, provider/constructors.ts makes them): their object types, their
 * component specs, how each token is constructed, and the resources those components make.
 */
export interface ProviderSurface {
  types: Record<string, ObjectType>;
  components: ComponentSpec[];
  constructors: Record<string, Constructor>;
  /**
   * The CRUD of the `KlutchResource` kinds its components make (dynamic-providers/klutch-resource.ts),
   * by kind: what the plugin serves as `klutch:internal:<Kind>` (provider/internal-resources.ts).
   */
  resources?: Record<string, pulumi.dynamic.ResourceProvider>;
}
