/**
 * The composition function: the SDK's request in, the SDK's response out. The input's kind picks
 * the step, and the step composes over plain objects: patchAndTransform for `Resources`, the
 * local PostgreSQL backend (instance, binding, backup, restore), a8s's and a9s's bindings and the network connections for the others
 * (local-postgresql.ts, local-binding.ts, a8s-binding.ts, a9s-binding.ts, network-connection.ts,
 * network-connections.ts). Only this file knows the SDK.
 */
import {
  Ready,
  Resource,
  Severity,
  Status,
  Target,
  fatal,
  getDesiredCompositeResource,
  getInput,
  getObservedComposedResources,
  getObservedCompositeResource,
  type ComposeFunction,
  type ComposeResponse,
  type Logger,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from "@crossplane-org/function-sdk-typescript";
import {
  A8S_SERVICE_BINDING_KIND,
  A9S_SERVICE_BINDING_KIND,
  FUNCTION_NAME,
  InputError,
  LOCAL_POSTGRESQL_BACKUP_KIND,
  LOCAL_POSTGRESQL_BINDING_KIND,
  LOCAL_POSTGRESQL_INSTANCE_KIND,
  LOCAL_POSTGRESQL_RESTORE_KIND,
  NETWORK_CONNECTION_KIND,
  NETWORK_CONNECTIONS_KIND,
  RESOURCES_KIND,
  parseInput,
  type FunctionInput,
} from "./input.js";
import { deepMerge, isJsonObject, type JsonObject } from "./json.js";
import { composeA8sServiceBinding } from "./a8s-binding.js";
import { composeA9sServiceBinding } from "./a9s-binding.js";
import { BINDINGS_REQUIREMENT } from "./binding-roles.js";
import { generatePassword } from "./kubernetes-object.js";
import { composeLocalPostgresqlBinding } from "./local-binding.js";
import { INSTANCE_REQUIREMENT } from "./local-instance.js";
import { composeLocalPostgresqlBackup } from "./local-backup.js";
import { composeLocalPostgresqlInstance } from "./local-postgresql.js";
import { BACKUP_REQUIREMENT, composeLocalPostgresqlRestore } from "./local-restore.js";
import { composeNetworkConnection } from "./network-connection.js";
import { composeNetworkConnections } from "./network-connections.js";
import { patchAndTransform } from "./patch-and-transform.js";
import { dataServiceOf } from "./services/registry.js";
import {
  CompositeError,
  stringAt,
  type ObservedResource,
  type StepCondition,
  type StepResult,
} from "./step.js";

/**
 * Composes what the input asks for. Never throws: any failure is a fatal result, on which
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
  let input: FunctionInput;
  try {
    input = parseInput(getInput(req));
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

  const observed: Record<string, ObservedResource> = {};
  for (const [name, r] of Object.entries(getObservedComposedResources(req)))
    if (isJsonObject(r.resource))
      observed[name] = { resource: r.resource, connectionDetails: r.connectionDetails ?? {} };

  let step: StepResult;
  try {
    step = runStep(req, input, oxr, observed);
  } catch (e) {
    if (!(e instanceof CompositeError)) throw e;
    return fatal(rsp, e.message);
  }
  const fatalResult = step.results.find((r) => r.severity === "Fatal");
  if (fatalResult) return fatal(rsp, fatalResult.message);

  // Warnings about the claim's own resources go to the claim too, where its owner looks;
  // patch-and-transform's are about the composition, for whoever wrote it.
  writeResponse(
    req,
    rsp,
    oxr,
    step,
    input.kind === RESOURCES_KIND ? Target.TARGET_COMPOSITE : Target.TARGET_COMPOSITE_AND_CLAIM,
  );
  logger?.debug(
    {
      step: input.kind,
      composed: step.composed.map((c) => `${c.name}:${c.ready ? "ready" : "not ready"}`),
      conditions: step.conditions.map((c) => `${c.type}=${c.status}:${c.reason}`),
      warnings: step.results.length,
    },
    "composed resources",
  );
  return rsp;
}

function runStep(
  req: RunFunctionRequest,
  input: FunctionInput,
  oxr: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
): StepResult {
  switch (input.kind) {
    case RESOURCES_KIND: {
      const c = patchAndTransform(oxr, observed, input.resources);
      return {
        composed: c.composed,
        compositePatch: c.compositeStatusPatch,
        ...(c.compositeReady === false ? { compositeReady: false as const } : {}),
        conditions: [],
        results: c.results,
      };
    }
    case LOCAL_POSTGRESQL_INSTANCE_KIND:
      return composeLocalPostgresqlInstance(
        oxr,
        observed,
        extraResources(req, BINDINGS_REQUIREMENT),
        input,
        generatePassword,
      );
    case LOCAL_POSTGRESQL_BINDING_KIND:
      return composeLocalPostgresqlBinding(
        oxr,
        observed,
        extraResources(req, INSTANCE_REQUIREMENT),
        input,
        generatePassword,
      );
    case LOCAL_POSTGRESQL_BACKUP_KIND:
      return composeLocalPostgresqlBackup(
        oxr,
        observed,
        extraResources(req, INSTANCE_REQUIREMENT),
        input,
        generatePassword,
      );
    case LOCAL_POSTGRESQL_RESTORE_KIND:
      return composeLocalPostgresqlRestore(
        oxr,
        observed,
        extraResources(req, BACKUP_REQUIREMENT),
        extraResources(req, INSTANCE_REQUIREMENT),
        input,
      );
    case A8S_SERVICE_BINDING_KIND:
      return composeA8sServiceBinding(oxr, observed, input);
    case A9S_SERVICE_BINDING_KIND:
      return composeA9sServiceBinding(oxr, observed);
    case NETWORK_CONNECTION_KIND:
      return composeNetworkConnection(
        observed,
        input,
        dataServiceOf(stringAt(oxr, "spec", "serviceInstanceType"))?.instanceType,
      );
    case NETWORK_CONNECTIONS_KIND:
      return composeNetworkConnections(oxr, observed, input);
  }
}

/**
 * Crossplane 1.20 sends what the last response's requirements.extra_resources asked for under
 * the same key: no key, not asked yet; an empty list, nothing matched.
 */
function extraResources(req: RunFunctionRequest, key: string): JsonObject[] | undefined {
  return req.extraResources?.[key]?.items.map((r) => r.resource).filter(isJsonObject);
}

const CONDITION_STATUS: Record<StepCondition["status"], Status> = {
  True: Status.STATUS_CONDITION_TRUE,
  False: Status.STATUS_CONDITION_FALSE,
  Unknown: Status.STATUS_CONDITION_UNKNOWN,
};

/**
 * Writes a step's outcome into the response, on top of what earlier pipeline steps desired (the
 * response's desired state is the request's): composed resources of other names stay, and the
 * composite keeps what they asked of it, connection details included unless the step replaces them.
 */
function writeResponse(
  req: RunFunctionRequest,
  rsp: ComposeResponse,
  oxr: JsonObject,
  step: StepResult,
  target: Target,
): void {
  // No Normal result on success: Crossplane turns each into an event on the composite resource,
  // one per reconcile (function-patch-and-transform reports success only in its log).
  for (const r of step.results)
    rsp.results.push({ severity: Severity.SEVERITY_WARNING, message: r.message, target });
  for (const c of step.conditions)
    rsp.conditions.push({
      type: c.type,
      status: CONDITION_STATUS[c.status],
      reason: c.reason,
      ...(c.message !== undefined ? { message: c.message } : {}),
      target: Target.TARGET_COMPOSITE_AND_CLAIM,
    });
  if (step.requirements) {
    // Crossplane 1.20 reads extra_resources; the SDK's requireResource writes `resources`,
    // which only Crossplane 2 reads, so the selectors are written here.
    rsp.requirements ??= { extraResources: {}, resources: {}, schemas: {} };
    for (const [key, s] of Object.entries(step.requirements))
      rsp.requirements.extraResources[key] = {
        apiVersion: s.apiVersion,
        kind: s.kind,
        matchLabels: { labels: { ...s.matchLabels } },
      };
  }

  for (const c of step.composed)
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
    ...step.compositePatch,
  });
  rsp.desired.composite = Resource.fromPartial({
    resource,
    connectionDetails: { ...(step.connectionDetails ?? earlier?.connectionDetails ?? {}) },
    ready: step.compositeReady === false ? Ready.READY_FALSE : (earlier?.ready ?? Ready.READY_UNSPECIFIED),
  });
}
