// The function's test fixtures, shared by every *.test.ts here (as Crossplane's
// function-template-typescript keeps its src/test-helpers.ts): the composites, observed
// resources and input templates each test builds its request from. Not part of the function:
// its image holds main.ts's imports only (host/local-clusters/images/function-image.ts).
import type { ObservedResource } from "./step.js";
import {
  addressOf,
  endpointsOf,
  rewriteCredentials,
  type Extraction,
} from "./services/contract/references.js";
import type { DataServiceCredentials } from "./services/contract/shape.js";

/** A composed or observed resource, for reading its fields without a cast at each. */
export type Json = Record<string, any>;
export const json = (o: unknown): Json => o as Json;

/** The labels Crossplane puts on a claim's composite. */
export const claimLabels = (claim: string, namespace = "team-a"): Record<string, string> => ({
  "crossplane.io/claim-name": claim,
  "crossplane.io/claim-namespace": namespace,
});

/** The composite of the PostgresqlInstance claim `pg` of team-a, with status.managed when given. */
export const instanceComposite = (managed?: Json) => ({
  apiVersion: "anynines.com/v1",
  kind: "XPostgresqlInstance",
  metadata: { name: "pg-x7k2p", labels: claimLabels("pg") },
  ...(managed ? { status: { managed } } : {}),
});

/** That instance once composed: where it serves and its superuser's Secret. */
export const READY_INSTANCE = instanceComposite({
  host: "pg-pg.team-a.svc.cluster.local",
  port: 5432,
  adminSecret: "pg-pg-admin",
});

/** The composite of a claim of `kind` (XBackup, XRestore) named `claim`, with status.managed when given. */
export const claimComposite = (kind: string, claim: string, uid: string, spec: Json, managed?: Json) => ({
  apiVersion: "anynines.com/v1",
  kind,
  metadata: { name: `${claim}-x1`, uid, labels: claimLabels(claim) },
  spec,
  ...(managed ? { status: { managed } } : {}),
});

/** A ServiceBinding claim's composite, as Crossplane hands it to the function. */
export const bindingComposite = (name: string, claim: string, uid: string, spec: Json) => ({
  apiVersion: "anynines.com/v1",
  kind: "XServiceBinding",
  metadata: { name, uid, labels: claimLabels(claim) },
  spec,
});

/**
 * A provider-kubernetes Object as the function observes it: its spec, its Ready condition, what
 * it reads back from the cluster (`atProvider`), and its connection details.
 */
export const observedObject = (opts: {
  spec: Json;
  ready: boolean;
  name?: string;
  atProvider?: Json;
  connectionDetails?: Record<string, Buffer>;
}): ObservedResource => ({
  resource: {
    apiVersion: "kubernetes.crossplane.io/v1alpha2",
    kind: "Object",
    ...(opts.name ? { metadata: { name: opts.name } } : {}),
    spec: opts.spec,
    status: {
      ...(opts.atProvider ? { atProvider: opts.atProvider } : {}),
      conditions: [{ type: "Ready", status: opts.ready ? "True" : "False" }],
    },
  },
  connectionDetails: opts.connectionDetails ?? {},
});

/** A password source that always gives the same one. */
export const fixedPassword = (password: string) => (): string => password;

/** The claim-namespace patch every NetworkPath template starts with. */
const CLAIM_NAMESPACE_PATCH = {
  type: "FromCompositeFieldPath",
  fromFieldPath: "metadata.labels[crossplane.io/claim-namespace]",
  toFieldPath: "spec.consumerNamespace",
};

/**
 * A `network-path` template of a Resources input: a proxy NetworkPath given the claim's
 * namespace, then `patches`, Ready when the path is.
 */
export const networkPathTemplate = (patches: Json[], extra: Json = {}) => ({
  name: "network-path",
  base: {
    apiVersion: "klutch.anynines.com/v1alpha1",
    kind: "NetworkPath",
    spec: { implementation: "proxy" },
  },
  patches: [CLAIM_NAMESPACE_PATCH, ...patches],
  readinessChecks: [{ type: "MatchCondition", matchCondition: { type: "Ready", status: "True" } }],
  ...extra,
});

/** A Secret's data as the function gets it: bytes by key. */
/** A composed XTCPConnection as observed: Ready ones report the path (`address`, port + 30000). */
export const observedConnection = (host: string, port: number, ready: Json, address = "np.app") => ({
  resource: {
    apiVersion: "klutch.anynines.com/v1",
    kind: "XTCPConnection",
    spec: { instanceHost: host, port },
    status: {
      conditions: [ready],
      ...(ready.status === "True" ? { hostForConsumer: address, port: port + 30000 } : {}),
    },
  },
  connectionDetails: {},
});

export const bytes = (o: Record<string, string>): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Buffer.from(v)]));
/** Connection details back as text, to compare. */
export const text = (o: Readonly<Record<string, Buffer>> | undefined): Record<string, string> | undefined =>
  o && Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.toString("utf8")]));

/**
 * A data service's credentials through its references: the endpoints they name, and the
 * credentials rewritten to `paths` (host:port of the instance → host:port the app reaches).
 */
export function throughPaths(
  service: DataServiceCredentials,
  secret: Record<string, string>,
  paths: Record<string, string>,
): { endpoints: Extraction; rewritten: Record<string, string> } {
  const credentials = bytes(secret);
  const refs = service.references(Object.keys(secret));
  const endpoints = endpointsOf(credentials, refs);
  const rewritten = rewriteCredentials(credentials, refs, (e) => {
    const to = paths[addressOf(e)];
    if (!to) throw new Error(`the test gives no path for ${addressOf(e)}`);
    const [host, port] = to.split(":");
    return { host: host!, port: Number(port) };
  });
  return { endpoints, rewritten: text(rewritten)! };
}

/** The endpoints of a found extraction as `label host:port`, to compare. */
export function endpointList(extraction: Extraction): string[] {
  if (extraction.kind !== "found") throw new Error(`no endpoints: ${extraction.message}`);
  return extraction.endpoints.map((e) => `${e.label} ${e.host}:${e.port}`);
}
