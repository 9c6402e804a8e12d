/**
 * A ServiceBinding served by anynines' service brokers, made as Klutch's own composition
 * `a9s-servicebinding` makes it (anynines/klutchio crossplane-api/api/a9s/servicebinding/
 * composition.yaml, main 0b4539e): provider-anynines' ServiceBinding (dataservices.anynines.com/v1)
 * with `acceptsIncomplete: true`, labelled with the instance type and the claim's name and
 * namespace, `forProvider.instanceName` the claim's spec.instanceRef, on ProviderConfig
 * `<serviceInstanceType>-service-broker`, writing its connection Secret `<claim>-creds` to the
 * claim's namespace; the composite's status.managed gets its serviceBindingID, state and conditions.
 *
 * The Secret's name and namespace are not ours to choose: provider-anynines reads
 * `<claim-name label>-creds` in the claim-namespace label's namespace back to fill
 * status.atProvider.connectionDetails (GetServiceBindingSecret in provider-anynines/internal/
 * controller/servicebinding/servicebinding.go). Crossplane reads the same Secret as the composed
 * resource's connection details, which the network-connections step turns into the claim's Secret;
 * this step publishes nothing itself, so the claim's Secret never names the instance's own hosts.
 *
 * Pure: observed resources in, desired state out.
 */
import { isJsonObject, type JsonObject } from "./json.js";
import { dataServiceOf, DATA_SERVICES } from "./services/registry.js";
import {
  claimOf,
  conditionOf,
  instanceRefOf,
  isReadyTrue,
  stringAt,
  type ObservedResource,
  type StepCondition,
  type StepResult,
} from "./step.js";

/** The composed binding's name in the pipeline, as upstream's composition names it. */
export const A9S_BINDING_RESOURCE = "a9s-servicebinding";
export const A9S_BINDING_API_VERSION = "dataservices.anynines.com/v1";
export const INSTANCE_TYPE_LABEL = "klutch.io/instance-type";
export const BINDING_IMPLEMENTED = "BindingImplemented";

const STEP = "A9sServiceBinding";

/** provider-anynines' ServiceBinding for a binding claim, field for field as upstream's patches write it. */
export function a9sServiceBinding(composite: JsonObject, type: string): JsonObject {
  const claim = claimOf(composite, STEP);
  return {
    apiVersion: A9S_BINDING_API_VERSION,
    kind: "ServiceBinding",
    metadata: {
      labels: {
        [INSTANCE_TYPE_LABEL]: type,
        "crossplane.io/claim-namespace": claim.namespace,
        "crossplane.io/claim-name": claim.name,
      },
    },
    spec: {
      forProvider: { acceptsIncomplete: true, instanceName: instanceRefOf(composite, claim) },
      providerConfigRef: { name: `${type}-service-broker` },
      writeConnectionSecretToRef: { namespace: claim.namespace, name: `${claim.name}-creds` },
    },
  };
}

/** What upstream's ToCompositeFieldPath patches copy: only what provider-anynines reports. */
function managedStatus(observed: JsonObject | undefined): JsonObject {
  const status = isJsonObject(observed?.status) ? observed.status : {};
  const atProvider = isJsonObject(status.atProvider) ? status.atProvider : {};
  return {
    ...(atProvider.serviceBindingID !== undefined ? { serviceBindingID: atProvider.serviceBindingID } : {}),
    ...(atProvider.state !== undefined ? { state: atProvider.state } : {}),
    ...(Array.isArray(status.conditions) ? { conditions: status.conditions } : {}),
  };
}

function implemented(
  observed: ObservedResource | undefined,
  where: string,
  instanceRef: string,
): StepCondition {
  if (!observed)
    return {
      type: BINDING_IMPLEMENTED,
      status: "False",
      reason: "WaitingForProvider",
      message: `${where} for instance ${JSON.stringify(instanceRef)} was just requested from provider-anynines`,
    };
  if (!isReadyTrue(observed.resource)) {
    const ready = conditionOf(observed.resource, "Ready");
    const why = [ready?.reason, ready?.message].filter((s) => typeof s === "string" && s !== "").join(": ");
    return {
      type: BINDING_IMPLEMENTED,
      status: "False",
      reason: "WaitingForProvider",
      message: `${where} for instance ${JSON.stringify(instanceRef)} is not Ready yet${why ? ` (${why})` : ""}`,
    };
  }
  if (Object.keys(observed.connectionDetails).length === 0)
    return {
      type: BINDING_IMPLEMENTED,
      status: "False",
      reason: "ReadingCredentials",
      message: `${where} is Ready; reading its credentials from its connection Secret`,
    };
  return { type: BINDING_IMPLEMENTED, status: "True", reason: "Implemented", message: `${where} is bound` };
}

export function composeA9sServiceBinding(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
): StepResult {
  const claim = claimOf(composite, STEP);
  const type = stringAt(composite, "spec", "serviceInstanceType");
  if (!dataServiceOf(type)) {
    const message = `spec.serviceInstanceType is ${JSON.stringify(type ?? "")}; anynines binds ${DATA_SERVICES.map((s) => s.type).join(", ")}: set it to the type of the instance named by spec.instanceRef`;
    return {
      composed: [],
      compositeReady: false,
      conditions: [{ type: BINDING_IMPLEMENTED, status: "False", reason: "UnsupportedServiceType", message }],
      results: [{ severity: "Warning", message }],
    };
  }
  const current = observed[A9S_BINDING_RESOURCE];
  const where = `provider-anynines ServiceBinding of claim ${JSON.stringify(`${claim.namespace}/${claim.name}`)}`;
  const managed = managedStatus(current?.resource);
  return {
    composed: [
      {
        name: A9S_BINDING_RESOURCE,
        resource: a9sServiceBinding(composite, type!),
        ready: isReadyTrue(current?.resource),
      },
    ],
    ...(Object.keys(managed).length > 0 ? { compositePatch: { status: { managed } } } : {}),
    conditions: [implemented(current, where, instanceRefOf(composite, claim))],
    results: [],
  };
}
