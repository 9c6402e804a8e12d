/**
 * What the function knows of one data service: the keys of its binding's credentials that name
 * the instance (references.ts), as provider-anynines writes them for that service type. One
 * folder per service type, one line in registry.ts.
 */
import type { Reference } from "./references.js";

export interface DataServiceCredentials {
  /** spec.serviceInstanceType of a ServiceBinding (crossplane-api/api/common/servicebinding_definition.yaml). */
  type: string;
  /**
   * The instance's software, as its connections' `spec.enhancements` InstanceType names it (the
   * network connector's API: "InstanceType: Based on instance software (e.g., PostgreSQL,
   * RabbitMQ)"). An implementation may check the instance by it: the proxy checks PostgreSQL's
   * protocol (network/proxy/model/haproxy-config.ts); every other falls back to the core fields.
   * At most 63 characters (the connector's XRD).
   */
  instanceType: string;
  /** The references in credentials with these keys (a service may nest a group of keys per protocol). */
  references(keys: readonly string[]): Reference[];
}
