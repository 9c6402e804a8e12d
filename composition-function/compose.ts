/**
 * The composition function: the SDK's request in, the SDK's response out, with the composing
 * itself done by patchAndTransform over plain objects.
 */
import {
  Ready,
  Resource,
  fatal,
  getDesiredCompositeResource,
  getInput,
  getObservedComposedResources,
  getObservedCompositeResource,
  warning,
  type ComposeFunction,
  type ComposeResponse,
  type Logger,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from "@crossplane-org/function-sdk-typescript";
import { FUNCTION_NAME, InputError, parseInput, type ResourceTemplate } from "./input.js";
import { deepMerge, isJsonObject, type JsonObject } from "./json.js";
import { patchAndTransform, type Composition, type ObservedComposed } from "./patch-and-transform.js";

/**
 * Composes the input's resources. Never throws: any failure is a fatal result, on which
 * Crossplane applies nothing and reports the message on the composite resource.
 */
export const compose: ComposeFunction = (req, rsp, logger) => {
  try {
    return run(req, rsp, logger);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    logger?.error({ error: message }, "composition failed");
    fatal(rsp, `${FUNCTION_NAME} failed: ${message}`);
    return rsp;
  }
};

function run(req: RunFunctionRequest, rsp: ComposeResponse, logger?: Logger): RunFunctionResponse {
  let templates: ResourceTemplate[];
  try {
    templates = parseInput(getInput(req));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return fatal(rsp, `invalid ${FUNCTION_NAME} input: ${e.message}`);
  }

  const oxr = getObservedCompositeResource(req)?.resource;
  if (!isJsonObject(oxr) || typeof oxr.apiVersion !== "string" || typeof oxr.kind !== "string")
    return fatal(
      rsp,
      `cannot compose: the request has no observed composite resource with apiVersion and kind`,
    );

  const observed: Record<string, ObservedComposed> = {};
  for (const [name, r] of Object.entries(getObservedComposedResources(req)))
    if (isJsonObject(r.resource)) observed[name] = { resource: r.resource };

  const composition = patchAndTransform(oxr, observed, templates);
  const fatalResult = composition.results.find((r) => r.severity === "Fatal");
  if (fatalResult) return fatal(rsp, fatalResult.message);

  // No Normal result on success: Crossplane turns each into an event on the composite resource,
  // one per reconcile (function-patch-and-transform reports success only in its log).
  for (const r of composition.results) warning(rsp, r.message);
  writeDesired(req, rsp, oxr, composition);
  logger?.debug(
    {
      composed: composition.composed.map((c) => `${c.name}:${c.ready ? "ready" : "not ready"}`),
      warnings: composition.results.length,
    },
    "composed resources",
  );
  return rsp;
}

/**
 * Writes the composition into the response's desired state, on top of what earlier pipeline
 * steps desired (the response's desired state is the request's): composed resources of other
 * names stay, and the composite keeps what they asked of it.
 */
function writeDesired(
  req: RunFunctionRequest,
  rsp: ComposeResponse,
  oxr: JsonObject,
  composition: Composition,
): void {
  for (const c of composition.composed)
    rsp.desired.resources[c.name] = Resource.fromPartial({
      resource: c.resource,
      ready: c.ready ? Ready.READY_TRUE : Ready.READY_FALSE,
    });

  // Crossplane takes only the status of the desired composite; apiVersion and kind say which
  // object it is. Nothing else of the observed composite is copied, so only patched status applies.
  const earlier = getDesiredCompositeResource(req);
  const resource = deepMerge(isJsonObject(earlier?.resource) ? earlier.resource : {}, {
    apiVersion: oxr.apiVersion,
    kind: oxr.kind,
    ...composition.compositeStatusPatch,
  });
  rsp.desired.composite = Resource.fromPartial({
    resource,
    connectionDetails: earlier?.connectionDetails ?? {},
    ready:
      composition.compositeReady === false ? Ready.READY_FALSE : (earlier?.ready ?? Ready.READY_UNSPECIFIED),
  });
}
