import type * as pulumi from "@pulumi/pulumi";
import type { Constructor } from "../../providers/kit/construct";
import type { ComponentSpec, ObjectType } from "../../providers/kit/schema-model";

/**
 * The components an implementation serves through the klutch provider (programs/klutch-provider/catalog.ts
 * puts them into schema.json, programs/klutch-provider/constructors.ts makes them): their object types, their
 * component specs, how each token is constructed, and the resources those components make.
 */
export interface ProviderSurface {
  types: Record<string, ObjectType>;
  components: ComponentSpec[];
  constructors: Record<string, Constructor>;
  /**
   * The CRUD of the `KlutchResource` kinds its components make (providers/dynamic/klutch-resource.ts),
   * by kind: what the plugin serves as `klutch:internal:<Kind>` (programs/klutch-provider/internal-resources.ts).
   */
  resources?: Record<string, pulumi.dynamic.ResourceProvider>;
}
