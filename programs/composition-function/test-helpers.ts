// The function's test fixtures, shared by every *.test.ts here (as Crossplane's
// function-template-typescript keeps its src/test-helpers.ts): the composites, observed
// resources and input templates each test builds its request from. Not part of the function:
// its image holds main.ts's imports only (host/local-clusters/images/function-image.ts).
import type { ObservedResource } from "./step.js";

/** A composed or observed resource, for reading its fields without a cast at each. */
export type Json = Record<string, any>;
export const json = (o: unknown): Json => o as Json;

/** The labels Crossplane puts on a claim's composite. */
export const claimLabels = (claim: string, namespace = "team-a"): Record<string, string> => ({
  "crossplane.io/claim-name": claim,
  "crossplane.io/claim-namespace": namespace,
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
