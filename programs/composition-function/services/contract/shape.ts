/**
 * What the function knows of one data service: the keys of its binding's credentials that name
 * the instance (references.ts), as provider-anynines writes them for that service type. One
 * folder per service type, one line in registry.ts.
 */
import type { Reference } from "./references.js";

export interface DataServiceCredentials {
  /** spec.serviceInstanceType of a ServiceBinding (crossplane-api/api/common/servicebinding_definition.yaml). */
  type: string;
  /** The references in credentials with these keys (a service may nest a group of keys per protocol). */
  references(keys: readonly string[]): Reference[];
}
