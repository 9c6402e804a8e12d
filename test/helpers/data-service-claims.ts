/**
 * The data-service claims an app developer applies in a consumer namespace, as upstream's XRDs
 * define them (lib/dataservices): a PostgreSQL instance on the local backend, and a binding to
 * it through a composition of choice, whose credentials land in `<binding>-credentials`.
 */

/** A `PostgresqlInstance` claim of the local backend's smallest plan. */
export function postgresqlInstance(name: string, namespace: string): object {
  return {
    apiVersion: "anynines.com/v1",
    kind: "PostgresqlInstance",
    metadata: { name, namespace },
    spec: {
      compositionRef: { name: "a8s-postgresql" },
      service: "a9s-postgresql14",
      plan: "postgresql-single-nano",
      expose: "Internal",
    },
  };
}

/** A `ServiceBinding` to `instanceRef` through `composition` (the network-aware one by default). */
export function serviceBinding(
  name: string,
  namespace: string,
  instanceRef: string,
  composition = "a8s-servicebinding-network",
): object {
  return {
    apiVersion: "anynines.com/v1",
    kind: "ServiceBinding",
    metadata: { name, namespace },
    spec: {
      instanceRef,
      serviceInstanceType: "postgresql",
      compositionRef: { name: composition },
      writeConnectionSecretToRef: { name: `${name}-credentials` },
    },
  };
}

/** A `Backup` of the PostgresqlInstance claim `instanceRef`, by upstream's default composition. */
export function backupClaim(name: string, namespace: string, instanceRef: string): object {
  return {
    apiVersion: "anynines.com/v1",
    kind: "Backup",
    metadata: { name, namespace },
    spec: { instanceRef, serviceInstanceType: "postgresql" },
  };
}

/** A `Restore` of the Backup claim `backupRef` into the PostgresqlInstance claim `instanceRef`. */
export function restoreClaim(
  name: string,
  namespace: string,
  backupRef: string,
  instanceRef: string,
): object {
  return {
    apiVersion: "anynines.com/v1",
    kind: "Restore",
    metadata: { name, namespace },
    spec: { backupRef, instanceRef, serviceInstanceType: "postgresql" },
  };
}
