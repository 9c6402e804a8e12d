/**
 * A local PostgreSQL server for a PostgresqlInstance claim (an XPostgresqlInstance, anynines.com/v1):
 * the stand-in for anynines' a8s data service, which cannot run here. One pod from the node's
 * PostgreSQL image, in the claim's namespace, behind a Service; its admin password in a Secret
 * beside it. The composite's status.managed says where it serves and where the admin password
 * is, which the binding step (local-binding.ts) reads from the instance, and which binding roles
 * it holds: the instance drops the roles of bindings that are gone (binding-roles.ts).
 *
 * Pure, but for the password: `newPassword` is asked only while no observed Secret has one.
 */
import {
  BINDINGS_REQUIREMENT,
  REVOKED_ROLES_ANNOTATION,
  REVOKE_SCRIPT,
  bindingsSelector,
  knownRoles,
  liveRoles,
  planRevocation,
} from "./binding-roles.js";
import { DEFAULT_CLUSTER_DOMAIN, type LocalPostgresqlInstanceInput } from "./input.js";
import type { JsonObject } from "./json.js";
import {
  fromSecret,
  localObject,
  observedStringData,
  restrictedSecurityContext,
} from "./kubernetes-object.js";
import {
  CompositeError,
  claimOf,
  isReadyTrue,
  type Claim,
  type ObservedResource,
  type StepResult,
} from "./step.js";

/** a8s' PostgreSQL port, which its bindings leave out of the credentials. */
export const POSTGRESQL_PORT = 5432;
/** The pod label the Service selects by; its value is the claim's name. */
export const POSTGRESQL_POD_LABEL = "klutch.anynines.com/postgresql";
/** The superuser the server is initialised with (the image's POSTGRES_PASSWORD is its password). */
export const ADMIN_USER = "postgres";
export const ADMIN_DATABASE = "postgres";

/** The composed resources' names in the pipeline. */
export const INSTANCE_RESOURCES = {
  adminCredentials: "admin-credentials",
  server: "server",
  service: "service",
} as const;

/** What the instance reports in status.managed, and the binding step reads. */
export interface ManagedInstance {
  /**
   * The Service's fully qualified name, <claim>-pg.<namespace>.svc.<cluster domain>: a resolver
   * that applies no search list (HAProxy's `resolvers`, which the proxy pods use to follow an
   * address change) finds it too.
   */
  host: string;
  port: number;
  /** The Secret (in the claim's namespace) whose `password` is the superuser's. */
  adminSecret: string;
}

/** What status.managed holds besides the ManagedInstance: the binding roles the server has. */
export interface ManagedRoles {
  bindingRoles: string[];
}

const STEP = "LocalPostgresqlInstance";

/**
 * A pod that runs `script` once against the instance as its superuser: how the local backend
 * changes roles (a binding's role, a gone binding's revocation). A bare Pod, not a Job: when
 * its Object is deleted, provider-kubernetes deletes what it applied with no propagation
 * policy (internal/controller/object/object.go v0.18.0), which for a batch/v1 Job orphans its
 * pods, so every binding would leave one behind; a Pod goes with its Object. A failed run is
 * restarted in place with the kubelet's back-off (the server may still be starting), and the
 * Object is ready once the pod Succeeded. The password is read from the admin Secret, never
 * written into the spec.
 */
export function adminScriptPod(o: {
  name: string;
  namespace: string;
  /** The container's name, which says what the script does. */
  container: string;
  script: string;
  instance: Pick<ManagedInstance, "host" | "adminSecret">;
  image: string;
  imagePullPolicy: string;
  env: JsonObject[];
  annotations?: Record<string, string>;
}): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: o.name,
      namespace: o.namespace,
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      restartPolicy: "OnFailure",
      automountServiceAccountToken: false,
      containers: [
        {
          name: o.container,
          image: o.image,
          imagePullPolicy: o.imagePullPolicy,
          // The kubelet expands $(NAME) and turns $$ into $ in a command (Kubernetes'
          // third_party/forked/golang/expansion): the scripts use neither, only $NAME for sh.
          command: ["/bin/sh", "-c", o.script],
          env: [
            { name: "PGHOST", value: o.instance.host },
            { name: "PGUSER", value: ADMIN_USER },
            { name: "PGDATABASE", value: ADMIN_DATABASE },
            fromSecret("PGPASSWORD", o.instance.adminSecret, "password"),
            ...o.env,
          ],
          securityContext: restrictedSecurityContext(),
        },
      ],
    },
  };
}

/** provider-kubernetes' readiness query for an adminScriptPod: it ran to success. */
export const SCRIPT_SUCCEEDED = "object.status.phase == 'Succeeded'";

/**
 * A Service name is a DNS-1035 label, stricter than the DNS subdomain a claim's name may be:
 * refused here with the fix, rather than by the API server in provider-kubernetes' status.
 */
function serviceName(claim: Claim): string {
  const name = `${claim.name}-pg`;
  if (name.length > 63 || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))
    throw new CompositeError(
      `PostgresqlInstance claim ${JSON.stringify(claim.name)} would get Service ${JSON.stringify(name)}, which is not a DNS-1035 label; ` +
        `name the claim with at most 60 lower-case letters, digits and "-", starting with a letter`,
    );
  return name;
}

export function managedInstance(claim: Claim, clusterDomain = DEFAULT_CLUSTER_DOMAIN): ManagedInstance {
  return {
    host: `${serviceName(claim)}.${claim.namespace}.svc.${clusterDomain}`,
    port: POSTGRESQL_PORT,
    adminSecret: `${claim.name}-pg-admin`,
  };
}

export function composeLocalPostgresqlInstance(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  /** The XServiceBindings delivered under BINDINGS_REQUIREMENT; undefined: not delivered yet. */
  bindings: readonly JsonObject[] | undefined,
  input: LocalPostgresqlInstanceInput,
  newPassword: () => string,
): StepResult {
  const claim = claimOf(composite, STEP);
  const managed = managedInstance(claim, input.clusterDomain);
  const name = serviceName(claim);
  const podLabels = { [POSTGRESQL_POD_LABEL]: claim.name };
  const R = INSTANCE_RESOURCES;

  const adminObserved = observed[R.adminCredentials]?.resource;
  const password = observedStringData(adminObserved, "password") ?? newPassword();
  const adminSecret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: managed.adminSecret, namespace: claim.namespace },
    type: "Opaque",
    stringData: { username: ADMIN_USER, password, database: ADMIN_DATABASE },
  };

  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: claim.namespace, labels: podLabels },
    spec: {
      replicas: 1,
      // Its data is in an emptyDir of the pod: never two pods, and a new pod starts afresh.
      strategy: { type: "Recreate" },
      selector: { matchLabels: podLabels },
      template: {
        metadata: { labels: podLabels },
        spec: {
          automountServiceAccountToken: false,
          containers: [
            {
              name: "postgres",
              image: input.image,
              imagePullPolicy: input.imagePullPolicy,
              env: [fromSecret("POSTGRES_PASSWORD", managed.adminSecret, "password")],
              ports: [{ name: "postgresql", containerPort: POSTGRESQL_PORT, protocol: "TCP" }],
              readinessProbe: {
                exec: { command: ["pg_isready", "-h", "127.0.0.1", "-U", ADMIN_USER] },
                periodSeconds: 2,
              },
              securityContext: restrictedSecurityContext(),
              volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
            },
          ],
          volumes: [{ name: "data", emptyDir: {} }],
        },
      },
    },
  };

  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: claim.namespace, labels: podLabels },
    spec: {
      type: "ClusterIP",
      selector: podLabels,
      ports: [{ name: "postgresql", port: POSTGRESQL_PORT, targetPort: POSTGRESQL_PORT, protocol: "TCP" }],
    },
  };

  const object = (manifest: JsonObject, celQuery?: string) =>
    localObject(input.providerConfigName, manifest, celQuery);
  const composed: { name: string; resource: JsonObject; ready: boolean }[] = [
    { name: R.adminCredentials, resource: object(adminSecret) },
    {
      name: R.server,
      resource: object(deployment, "has(object.status.readyReplicas) && object.status.readyReplicas > 0"),
    },
    { name: R.service, resource: object(service) },
  ].map((c) => ({ ...c, ready: isReadyTrue(observed[c.name]?.resource) }));

  const revocation = planRevocation(
    claim,
    knownRoles(composite),
    bindings && liveRoles(bindings, claim.name),
    observed,
  );
  if (revocation.resourceName && revocation.podName) {
    const pod = adminScriptPod({
      name: revocation.podName,
      namespace: claim.namespace,
      container: "revoke",
      script: REVOKE_SCRIPT,
      instance: managed,
      image: input.image,
      imagePullPolicy: input.imagePullPolicy,
      env: [{ name: "ROLES", value: revocation.revoke.join(" ") }],
      annotations: { [REVOKED_ROLES_ANNOTATION]: revocation.revoke.join(" ") },
    });
    // Housekeeping, not part of the instance: counted ready, so the instance stays Ready while
    // it runs (planRevocation reads the Object's own Ready condition to know it succeeded).
    composed.push({ name: revocation.resourceName, resource: object(pod, SCRIPT_SUCCEEDED), ready: true });
  }
  const roles: ManagedRoles = { bindingRoles: revocation.known };

  return {
    composed,
    compositePatch: { status: { managed: { ...managed, ...roles } } },
    requirements: { [BINDINGS_REQUIREMENT]: bindingsSelector(claim) },
    conditions: [],
    results: [],
  };
}
