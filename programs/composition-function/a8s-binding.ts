/**
 * A ServiceBinding served by a8s, anynines' PostgreSQL operator on the control plane, made as
 * Klutch's own composition `a8s-servicebinding` makes it (anynines/klutchio
 * crossplane-api/api/a8s/servicebinding/composition.yaml, main 0b4539e; the same at v1.4.0 and
 * v1.5.0): an a8s ServiceBinding (servicebindings.anynines.com/v1beta3) named as the claim, in
 * the claim's namespace, for the a8s Postgresql (postgresql.anynines.com/v1beta3) that the
 * claim's spec.instanceRef names in that namespace, wrapped in a provider-kubernetes Object; the
 * composite's status.managed.implemented and status.managed.secret come from the a8s binding's
 * status.implemented and status.secret.
 *
 * One thing more than upstream: the credentials a8s writes become the binding's connection
 * details, so that the network-connection step can take the instance's host from them and
 * rewrite it (network-connection.ts). provider-kubernetes reads each spec.connectionDetails
 * reference on every observe, and the observe fails while the referenced object does not exist
 * (connectionDetails in internal/controller/object/object.go, v0.18.0). So the Object names the
 * Secret's keys only once a8s reports the binding implemented and names its Secret; until then,
 * the binding reports that it waits for a8s.
 *
 * Pure: observed resources in, desired state out.
 */
import type { A8sServiceBindingInput } from "./input.js";
import { isJsonObject, type JsonObject } from "./json.js";
import { kubernetesObject, secretConnectionDetails } from "./kubernetes-object.js";
import { BINDING_KEYS } from "./local-binding.js";
import {
  claimOf,
  instanceRefOf,
  isReadyTrue,
  stringAt,
  uidOf,
  type ObservedResource,
  type StepCondition,
  type StepResult,
} from "./step.js";

/** The composed Object's name in the pipeline; the network-connection step's credentialsFrom. */
export const A8S_BINDING_RESOURCE = "binding";
export const A8S_BINDING_API_VERSION = "servicebindings.anynines.com/v1beta3";
export const A8S_BINDING_KIND = "ServiceBinding";

/** The a8s instance kind for each spec.serviceInstanceType, as upstream's map transforms have it. */
export const A8S_INSTANCE_TYPES: Readonly<Record<string, { apiVersion: string; kind: string }>> = {
  postgresql: { apiVersion: "postgresql.anynines.com/v1beta3", kind: "Postgresql" },
};

/** Ready when a8s says the binding is implemented (provider-kubernetes evaluates it on the observed object). */
export const IMPLEMENTED_QUERY = "has(object.status.implemented) && object.status.implemented == true";

export const BINDING_IMPLEMENTED = "BindingImplemented";

const STEP = "A8sServiceBinding";

/** What a8s reports on its binding, as provider-kubernetes copies it to status.atProvider.manifest. */
function a8sStatus(object: JsonObject | undefined): {
  implemented: boolean;
  secret?: string;
  namespace?: string;
} {
  const status = isJsonObject(object?.status) ? object.status : {};
  const atProvider = isJsonObject(status.atProvider) ? status.atProvider : {};
  const manifest = isJsonObject(atProvider.manifest) ? atProvider.manifest : {};
  const reported = isJsonObject(manifest.status) ? manifest.status : {};
  const secret = stringAt(reported, "secret", "name");
  const namespace = stringAt(reported, "secret", "namespace");
  return {
    implemented: reported.implemented === true,
    ...(secret ? { secret } : {}),
    ...(namespace ? { namespace } : {}),
  };
}

export function composeA8sServiceBinding(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  input: A8sServiceBindingInput,
): StepResult {
  const claim = claimOf(composite, STEP);
  const instanceRef = instanceRefOf(composite, claim);
  const type = stringAt(composite, "spec", "serviceInstanceType");
  const instance =
    type !== undefined && Object.hasOwn(A8S_INSTANCE_TYPES, type) ? A8S_INSTANCE_TYPES[type] : undefined;
  if (!instance) {
    // The XRD admits other types for compositions other than a8s-servicebinding (its CEL rule); a8s serves none of them.
    const message = `spec.serviceInstanceType is ${JSON.stringify(type ?? "")}; a8s binds ${Object.keys(A8S_INSTANCE_TYPES).join(", ")} only: set it to postgresql, or bind with a composition of the backend that serves ${JSON.stringify(type ?? "")}`;
    return {
      composed: [],
      compositeReady: false,
      conditions: [{ type: BINDING_IMPLEMENTED, status: "False", reason: "UnsupportedServiceType", message }],
      results: [{ severity: "Warning", message }],
    };
  }

  const observedObject = observed[A8S_BINDING_RESOURCE];
  const reported = a8sStatus(observedObject?.resource);
  // a8s writes its Secret beside the binding; its status names it.
  const secret =
    reported.implemented && reported.secret
      ? { name: reported.secret, namespace: reported.namespace ?? claim.namespace }
      : undefined;
  const uid = uidOf(composite, STEP);
  const binding = kubernetesObject({
    manifest: {
      apiVersion: A8S_BINDING_API_VERSION,
      kind: A8S_BINDING_KIND,
      metadata: { name: claim.name, namespace: claim.namespace },
      spec: { instance: { ...instance, name: instanceRef, namespace: claim.namespace } },
    },
    providerConfigName: input.providerConfigName,
    readiness: { policy: "DeriveFromCelQuery", celQuery: IMPLEMENTED_QUERY },
    ...(secret ? { connectionDetails: secretConnectionDetails(secret, BINDING_KEYS) } : {}),
    writeConnectionSecretToRef: { namespace: input.connectionSecretNamespace, name: `${uid}-credentials` },
    // a8s implementing the binding is seen when it happens where watches are on (the local stack).
    watch: true,
  });

  const where = `a8s ServiceBinding ${JSON.stringify(`${claim.namespace}/${claim.name}`)}`;
  const details = observedObject?.connectionDetails ?? {};
  const published = Object.keys(details).length > 0;
  const condition: StepCondition = !reported.implemented
    ? {
        type: BINDING_IMPLEMENTED,
        status: "False",
        reason: "WaitingForA8s",
        message: `${where} for Postgresql ${JSON.stringify(instanceRef)} is not implemented by a8s yet`,
      }
    : !secret
      ? {
          type: BINDING_IMPLEMENTED,
          status: "False",
          reason: "SecretNotNamed",
          message: `${where} is implemented, but a8s names no Secret in its status.secret.name yet`,
        }
      : {
          type: BINDING_IMPLEMENTED,
          status: published ? "True" : "False",
          reason: published ? "Implemented" : "ReadingCredentials",
          message: published
            ? `a8s wrote the credentials to Secret ${JSON.stringify(`${secret.namespace}/${secret.name}`)}`
            : `reading the credentials from Secret ${JSON.stringify(`${secret.namespace}/${secret.name}`)}`,
        };
  return {
    composed: [
      { name: A8S_BINDING_RESOURCE, resource: binding, ready: isReadyTrue(observedObject?.resource) },
    ],
    compositePatch: {
      status: {
        managed: {
          implemented: reported.implemented,
          // As upstream's patches copy them: what a8s reports, nothing filled in.
          ...(reported.secret || reported.namespace
            ? {
                secret: {
                  ...(reported.secret ? { name: reported.secret } : {}),
                  ...(reported.namespace ? { namespace: reported.namespace } : {}),
                },
              }
            : {}),
        },
      },
    },
    ...(published ? { connectionDetails: { ...details } } : {}),
    conditions: [condition],
    results: [],
  };
}
