import type * as pulumi from "@pulumi/pulumi";
import type { Constructor } from "../../providers/kit/construct";
import type { ComponentSpec, ObjectType, Prop } from "../../providers/kit/schema-model";

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
  /**
   * Its `networkConnector` settings as the environment's `klutch:index:NetworkConnector` type
   * shows them, each described without the implementation's name
   * (programs/klutch-provider/spec/environment.ts merges every implementation's, and prefixes
   * each field with the names that take it). A field several implementations take is declared
   * alike by each; network/registry.test.ts holds the keys to the config schema's.
   */
  connectorFields?: Record<string, Prop>;
}
