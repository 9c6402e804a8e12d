import { KLUTCH_FUNCTION } from "../connector-api/compositions";
import { A8S_POSTGRESQL, A8S_SERVICE_BINDING, DATASERVICES_GROUP } from "./xrds";
import { A8S_BACKUP, A8S_RESTORE } from "./backup-xrds";

/**
 * The data-service compositions this project renders, all Pipeline mode with Klutch's function
 * (programs/composition-function/, steps by input kind):
 *
 * - the local backend, a stand-in for a8s where a8s cannot run (local clusters): under a8s's own
 *   composition names, because upstream's XRD admits PostgreSQL services and plans only for
 *   `a8s-postgresql` and `a9s-postgresql` (its CEL rules), so a claim written for a8s works as is.
 *   An instance is PostgreSQL as a Deployment with a Service and an admin Secret, from the node's
 *   image; a binding is a login role made by a pod and a Secret with a8s's keys (`username`,
 *   `password`, `database`, `instance_service`), all through provider-kubernetes Objects. The
 *   instance drops the roles of bindings that are gone (programs/composition-function/binding-roles.ts).
 * - the network-aware binding (the seed's TODO, `compositionRef: a8s-servicebinding-network`): the
 *   same binding, plus one XTCPConnection to the instance's host and port, and the claim's
 *   Secret with the binding's keys and `host`/`port` of the connection's path; one more per
 *   offered implementation (`a8s-servicebinding-network-<implementation>`) asks for that one.
 *   Where a8s itself serves the instances, the same names compose a8s's own binding instead.
 * - the network-aware binding where anynines' service brokers serve the instances
 *   (`a9s-servicebinding-network[-<implementation>]`), for every service type: provider-anynines'
 *   ServiceBinding as upstream's `a9s-servicebinding` makes it, one XTCPConnection per endpoint
 *   its credentials name, and the claim's Secret with upstream's keys, each address rewritten to
 *   its connection's path (programs/composition-function/network-connections.ts).
 */

export const NETWORK_SERVICE_BINDING = "a8s-servicebinding-network";
/** The network-aware binding where anynines' service brokers serve the instances, of any service type. */
export const A9S_NETWORK_SERVICE_BINDING = "a9s-servicebinding-network";
/** Where composite resources' connection Secrets are written before Crossplane copies them to claims. */
export const CONNECTION_SECRETS_NAMESPACE = "crossplane-system";
/** provider-kubernetes' ProviderConfig (lib/crossplane/packages.ts providerConfigManifests). */
export const KUBERNETES_PROVIDER_CONFIG = "kubernetes-provider";
/** a8s's PostgreSQL port: its binding Secret carries no port. */
export const A8S_POSTGRESQL_PORT = 5432;

type Json = Record<string, unknown>;

function composition(
  name: string,
  kind: string,
  steps: { step: string; input: Json }[],
  labels: Record<string, string>,
): Json {
  return {
    apiVersion: "apiextensions.crossplane.io/v1",
    kind: "Composition",
    metadata: { name, labels },
    spec: {
      compositeTypeRef: { apiVersion: `${DATASERVICES_GROUP}/v1`, kind },
      // Without it Crossplane writes no XR connection Secret, and so no claim Secret
      // (internal/controller/apiextensions/composite/api.go of 1.20).
      writeConnectionSecretsToNamespace: CONNECTION_SECRETS_NAMESPACE,
      mode: "Pipeline",
      pipeline: steps.map(({ step, input }) => ({
        step,
        functionRef: { name: KLUTCH_FUNCTION.name },
        input: { apiVersion: KLUTCH_FUNCTION.inputApiVersion, ...input },
      })),
    },
  };
}

export interface LocalBackend {
  /** The PostgreSQL image the control plane's node holds (`klutch.local/postgres:<tag>`). */
  image: string;
}

const backendInput = (b: LocalBackend): Json => ({
  image: b.image,
  imagePullPolicy: "Never",
  providerConfigName: KUBERNETES_PROVIDER_CONFIG,
});

const bindingStep = (b: LocalBackend) => ({
  step: "binding",
  input: {
    kind: "LocalPostgresqlBinding",
    ...backendInput(b),
    connectionSecretNamespace: CONNECTION_SECRETS_NAMESPACE,
  },
});

export function localPostgresqlComposition(b: LocalBackend, labels: Record<string, string> = {}): Json {
  return composition(
    A8S_POSTGRESQL,
    "XPostgresqlInstance",
    [{ step: "instance", input: { kind: "LocalPostgresqlInstance", ...backendInput(b) } }],
    labels,
  );
}

/** The local backend's Backup, under a8s's name: a store pod that takes and keeps one dump. */
export function localBackupComposition(b: LocalBackend, labels: Record<string, string> = {}): Json {
  return composition(
    A8S_BACKUP,
    "XBackup",
    [{ step: "backup", input: { kind: "LocalPostgresqlBackup", ...backendInput(b) } }],
    labels,
  );
}

/** The local backend's Restore, under a8s's name: one run of pg_restore from a Backup's store. */
export function localRestoreComposition(b: LocalBackend, labels: Record<string, string> = {}): Json {
  return composition(
    A8S_RESTORE,
    "XRestore",
    [{ step: "restore", input: { kind: "LocalPostgresqlRestore", ...backendInput(b) } }],
    labels,
  );
}

export function localServiceBindingComposition(b: LocalBackend, labels: Record<string, string> = {}): Json {
  return composition(A8S_SERVICE_BINDING, "XServiceBinding", [bindingStep(b)], labels);
}

/**
 * The network-aware binding. Without `implementation` its connection takes the connector's
 * default (the XRD's defaultCompositionRef); with one, the composition is named
 * `a8s-servicebinding-network-<implementation>` and its connection asks for that
 * implementation's composition, so a binding picks a path by its compositionRef alone: upstream's
 * ServiceBinding has no field for it, and the seed says the connector is used "by using the
 * compositionRef".
 */
export function networkServiceBindingComposition(
  b: LocalBackend,
  labels: Record<string, string> = {},
  implementation?: string,
): Json {
  return networkBinding(bindingStep(b), "credentials", labels, implementation);
}

/**
 * The network-aware binding where a8s serves the instances (a cloud control plane with
 * anynines' Configuration): a8s's own ServiceBinding as upstream's `a8s-servicebinding` makes it,
 * its credentials read back from the Secret a8s writes (programs/composition-function/a8s-binding.ts),
 * then the same connection step as the local backend's.
 */
export function a8sNetworkServiceBindingComposition(
  labels: Record<string, string> = {},
  implementation?: string,
  /** As the a9s binding's: an instance host in one keeps its name (lib/instance-names/). */
  instanceZones: readonly string[] = [],
): Json {
  const binding = {
    step: "binding",
    input: {
      kind: "A8sServiceBinding",
      providerConfigName: KUBERNETES_PROVIDER_CONFIG,
      connectionSecretNamespace: CONNECTION_SECRETS_NAMESPACE,
    },
  };
  return networkBinding(binding, "binding", labels, implementation, instanceZones);
}

function networkBinding(
  binding: { step: string; input: Json },
  credentialsFrom: string,
  labels: Record<string, string>,
  implementation: string | undefined,
  instanceZones: readonly string[] = [],
): Json {
  return composition(
    networkServiceBindingName(implementation),
    "XServiceBinding",
    [
      binding,
      {
        step: "network-connection",
        input: {
          kind: "NetworkConnection",
          credentialsFrom,
          hostKey: "instance_service",
          defaultPort: A8S_POSTGRESQL_PORT,
          // As the connector names its compositions (lib/connector-api/compositions.ts compositionName).
          ...(implementation ? { implementation: implementation.toLowerCase() } : {}),
          ...(instanceZones.length > 0 ? { instanceZones: [...instanceZones] } : {}),
        },
      },
    ],
    labels,
  );
}

/** The network-aware binding's composition name, for the connector's default or one implementation. */
export function networkServiceBindingName(
  implementation?: string,
  base: string = NETWORK_SERVICE_BINDING,
): string {
  // Object names are lower case (awsVpcPeering: a8s-servicebinding-network-awsvpcpeering).
  return implementation ? `${base}-${implementation.toLowerCase()}` : base;
}

/** The composed binding's name in the a9s pipeline (programs/composition-function/a9s-binding.ts). */
export const A9S_BINDING_RESOURCE = "a9s-servicebinding";

/**
 * The network-aware binding where anynines' service brokers serve the instances: named
 * `a9s-servicebinding-network`, or `-<implementation>` to ask for that implementation's paths.
 */
export function a9sNetworkServiceBindingComposition(
  labels: Record<string, string> = {},
  implementation?: string,
  /** Zones the app clusters' instance-names servers answer (lib/instance-names/): hosts there keep their names. */
  instanceZones: readonly string[] = [],
): Json {
  return composition(
    networkServiceBindingName(implementation, A9S_NETWORK_SERVICE_BINDING),
    "XServiceBinding",
    [
      { step: "binding", input: { kind: "A9sServiceBinding" } },
      {
        step: "network-connections",
        input: {
          kind: "NetworkConnections",
          credentialsFrom: A9S_BINDING_RESOURCE,
          ...(implementation ? { implementation: implementation.toLowerCase() } : {}),
          ...(instanceZones.length > 0 ? { instanceZones: [...instanceZones] } : {}),
        },
      },
    ],
    labels,
  );
}
