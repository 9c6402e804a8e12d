import {
  CONNECTOR_GROUP,
  CONNECTOR_VERSION,
  NETWORK_PATH_API_VERSION,
  NETWORK_PATH_KIND,
  XR_KIND,
} from "./names";

/**
 * Compositions of XTCPConnection, each written once as a model and rendered in two forms:
 * Pipeline mode, and the legacy Resources mode (for a Crossplane 1.x core that runs no function
 * pods: a local core as a process). The Pipeline step is function-patch-and-transform (Klutch's
 * pin, where packages can be pulled) or Klutch's own function (programs/composition-function/, installed
 * from the local registry on local nodes), which takes the same resources and patches.
 */

export interface Patch {
  type: "FromCompositeFieldPath" | "ToCompositeFieldPath";
  fromFieldPath: string;
  toFieldPath: string;
  /** Required: do not compose until the source field exists. */
  required?: boolean;
}

export interface ComposedResource {
  name: string;
  base: Record<string, unknown>;
  patches: Patch[];
  /** The composed resource counts as ready when this condition type is True. */
  readyWhen?: string;
}

export interface CompositionModel {
  /** Composition name, e.g. `xtcpconnections-proxy`. */
  name: string;
  /** Implementation name, also the `klutch.anynines.com/implementation` label used for selection. */
  implementation: string;
  resources: ComposedResource[];
}

export const IMPLEMENTATION_LABEL = "klutch.anynines.com/implementation";
/** Implementation name of NOOP; the bridge leaves its NetworkPaths alone. */
export const NOOP_IMPLEMENTATION = "noop";

export function compositionName(implementation: string): string {
  return `xtcpconnections-${implementation.toLowerCase()}`;
}

/** Opt out: accepts the XRD and creates nothing. */
export function noopComposition(): CompositionModel {
  return { name: compositionName(NOOP_IMPLEMENTATION), implementation: NOOP_IMPLEMENTATION, resources: [] };
}

/**
 * Implementations realised by this project's Pulumi code: the composition composes a
 * NetworkPath that the bridge reconciles, and copies its result back into the XR's status.
 */
export function pulumiBackedComposition(implementation: string): CompositionModel {
  return {
    name: compositionName(implementation),
    implementation,
    resources: [networkPathResource(implementation, "network-path", true)],
  };
}

/**
 * A composed NetworkPath carrying the connection (cluster-scoped: Crossplane 1.x records
 * composed resources by name only, so a namespaced one cannot be read back). `reportBack`
 * copies the bridge's result into the XR and waits for Ready.
 */
function networkPathResource(implementation: string, name: string, reportBack: boolean): ComposedResource {
  const fromXr = (fromFieldPath: string, toFieldPath: string, required = false): Patch => ({
    type: "FromCompositeFieldPath",
    fromFieldPath,
    toFieldPath,
    ...(required ? { required } : {}),
  });
  const toXr = (field: string): Patch => ({
    type: "ToCompositeFieldPath",
    fromFieldPath: field,
    toFieldPath: field,
  });
  return {
    name,
    base: {
      apiVersion: NETWORK_PATH_API_VERSION,
      kind: NETWORK_PATH_KIND,
      spec: { implementation },
    },
    patches: [
      fromXr("metadata.labels[crossplane.io/claim-namespace]", "spec.consumerNamespace"),
      fromXr("metadata.name", "spec.connection", true),
      fromXr("spec.instanceHost", "spec.instanceHost", true),
      fromXr("spec.port", "spec.port", true),
      fromXr("spec.enhancements", "spec.enhancements"),
      ...(reportBack ? [toXr("status.hostForConsumer"), toXr("status.port")] : []),
    ],
    ...(reportBack ? { readyWhen: "Ready" } : {}),
  };
}

function renderResource(r: ComposedResource): Record<string, unknown> {
  return {
    name: r.name,
    base: r.base,
    patches: r.patches.map((p) => ({
      type: p.type,
      fromFieldPath: p.fromFieldPath,
      toFieldPath: p.toFieldPath,
      ...(p.required ? { policy: { fromFieldPath: "Required" } } : {}),
    })),
    ...(r.readyWhen
      ? {
          readinessChecks: [
            { type: "MatchCondition", matchCondition: { type: r.readyWhen, status: "True" } },
          ],
        }
      : {}),
  };
}

function header(model: CompositionModel, labels: Record<string, string>) {
  return {
    apiVersion: "apiextensions.crossplane.io/v1",
    kind: "Composition",
    metadata: { name: model.name, labels: { ...labels, [IMPLEMENTATION_LABEL]: model.implementation } },
  };
}

const compositeTypeRef = { apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`, kind: XR_KIND };

/** The function a Pipeline composition's one step calls, and the apiVersion of its `Resources` input. */
export interface PipelineFunction {
  name: string;
  inputApiVersion: string;
}

export const PATCH_AND_TRANSFORM: PipelineFunction = {
  name: "function-patch-and-transform",
  inputApiVersion: "pt.fn.crossplane.io/v1beta1",
};

/**
 * Klutch's composition function (programs/composition-function/input.ts): the subset of
 * function-patch-and-transform's `Resources` these compositions use, under its own group.
 */
export const KLUTCH_FUNCTION: PipelineFunction = {
  name: "function-klutch",
  inputApiVersion: "fn.klutch.anynines.com/v1alpha1",
};

/** Production form: Pipeline mode, one step of `fn` (function-patch-and-transform by default). */
export function renderPipeline(
  model: CompositionModel,
  labels: Record<string, string> = {},
  fn: PipelineFunction = PATCH_AND_TRANSFORM,
) {
  return {
    ...header(model, labels),
    spec: {
      compositeTypeRef,
      mode: "Pipeline",
      pipeline: [
        {
          step: "patch-and-transform",
          functionRef: { name: fn.name },
          input: {
            apiVersion: fn.inputApiVersion,
            kind: "Resources",
            resources: composedResources(model),
          },
        },
      ],
    },
  };
}

/**
 * Neither form accepts a composition without resources. Resources mode refuses it, and
 * function-patch-and-transform answers an input without resources (or environment patches)
 * with a fatal result, "resources or environment patches are required" (ValidateResources in
 * its validate.go, every release from v0.2.0 to v0.10.8), on which Crossplane 1.20 fails the
 * XR's reconcile (internal/controller/apiextensions/composite/composition_functions.go). So a
 * model that composes nothing (NOOP) gets one inert marker in both forms: a NetworkPath of
 * implementation `noop` that records the connection, which the bridge ignores and nothing
 * waits on.
 */
function composedResources(model: CompositionModel): Record<string, unknown>[] {
  if (model.resources.length > 0) return model.resources.map(renderResource);
  const marker = networkPathResource(model.implementation, "noop-marker", false);
  return [{ ...renderResource(marker), readinessChecks: [{ type: "None" }] }];
}

/** Function-less form (Crossplane 1.x `mode: Resources`), for a Crossplane that runs no function pods. */
export function renderResourcesMode(model: CompositionModel, labels: Record<string, string> = {}) {
  return {
    ...header(model, labels),
    spec: { compositeTypeRef, mode: "Resources", resources: composedResources(model) },
  };
}
