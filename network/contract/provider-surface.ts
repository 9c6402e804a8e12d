import type { Constructor } from "../../provider-kit/construct";
import type { ComponentSpec, ObjectType } from "../../provider-kit/schema-model";

/**
 * The components an implementation serves through the klutch provider (provider/catalog.ts
 * puts them into schema.json, provider/constructors.ts makes them): their object types, their
 * component specs, and how each token is constructed.
 */
export interface ProviderSurface {
  types: Record<string, ObjectType>;
  components: ComponentSpec[];
  constructors: Record<string, Constructor>;
}
