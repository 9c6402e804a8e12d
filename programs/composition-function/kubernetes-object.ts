/**
 * provider-kubernetes' Object (kubernetes.crossplane.io/v1alpha2, provider-kubernetes v0.18.0
 * apis/object/v1alpha2/types.go): how the local backends compose namespaced Kubernetes objects
 * from a cluster-scoped composite resource, and what they read back from the observed Objects.
 */
import { randomBytes } from "node:crypto";
import type { JsonObject } from "./json.js";
import { stringAt } from "./step.js";

export const OBJECT_API_VERSION = "kubernetes.crossplane.io/v1alpha2";
export const OBJECT_KIND = "Object";

/**
 * When provider-kubernetes counts an Object Ready. SuccessfulCreate: once the object is applied
 * (right for Secrets and Services, which have nothing to wait for); DeriveFromCelQuery: when the
 * query holds on the observed object (a Deployment's ready replicas, a Job's success).
 */
export type Readiness = { policy: "SuccessfulCreate" } | { policy: "DeriveFromCelQuery"; celQuery: string };

/** An entry of spec.connectionDetails: a field of another object, published under a key. */
export interface ConnectionDetailRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  fieldPath: string;
  toConnectionSecretKey: string;
}

export interface ObjectOptions {
  manifest: JsonObject;
  providerConfigName: string;
  readiness: Readiness;
  connectionDetails?: ConnectionDetailRef[];
  /** Where the Object writes its connection details; Crossplane reads them from there for the next call. */
  writeConnectionSecretToRef?: { name: string; namespace: string };
  /**
   * Watch the applied object, so a change of its status (the Job succeeding, the Deployment's
   * pod Ready) is observed at once. Without it provider-kubernetes looks again 30 s later
   * while the Object is not Ready (the poll-interval hook in internal/controller/object/
   * object.go), which made most of a local binding's time. An alpha field: honoured only with
   * provider-kubernetes' `watches` feature (ENABLE_WATCHES), which the local stack turns on
   * (lib/crossplane/packages.ts); elsewhere it is ignored and the 30 s poll applies.
   */
  watch?: boolean;
}

/** An Object wrapping `manifest`; cluster-scoped, so Crossplane names it after the composite. */
export function kubernetesObject(o: ObjectOptions): JsonObject {
  return {
    apiVersion: OBJECT_API_VERSION,
    kind: OBJECT_KIND,
    spec: {
      forProvider: { manifest: o.manifest },
      providerConfigRef: { name: o.providerConfigName },
      readiness: o.readiness,
      ...(o.connectionDetails ? { connectionDetails: o.connectionDetails } : {}),
      ...(o.writeConnectionSecretToRef ? { writeConnectionSecretToRef: o.writeConnectionSecretToRef } : {}),
      ...(o.watch ? { watch: true } : {}),
    },
  };
}

/**
 * An Object for what a local backend composes: ready once applied, or, given a CEL query, once
 * it holds on the applied object, then watched, so the readiness is seen when it changes, not at
 * the next poll.
 */
export function localObject(providerConfigName: string, manifest: JsonObject, celQuery?: string): JsonObject {
  return kubernetesObject({
    manifest,
    providerConfigName,
    readiness: celQuery ? { policy: "DeriveFromCelQuery", celQuery } : { policy: "SuccessfulCreate" },
    ...(celQuery ? { watch: true } : {}),
  });
}

/**
 * One connection detail per key of a Secret, read from its `data`: provider-kubernetes decodes
 * a v1 Secret's data.* values (connectionDetails in internal/controller/object/object.go), so
 * they arrive as the plain values, not base64.
 */
export function secretConnectionDetails(
  secret: { name: string; namespace: string },
  keys: readonly string[],
): ConnectionDetailRef[] {
  return keys.map((key) => ({
    apiVersion: "v1",
    kind: "Secret",
    name: secret.name,
    namespace: secret.namespace,
    fieldPath: `data.${key}`,
    toConnectionSecretKey: key,
  }));
}

/**
 * The stringData value a Secret manifest had when this function last composed it, read back
 * from the observed Object: how a generated password stays the same from call to call (the
 * function keeps no state, and the Object's spec is what it wrote).
 */
export function observedStringData(observedObject: JsonObject | undefined, key: string): string | undefined {
  return stringAt(observedObject, "spec", "forProvider", "manifest", "stringData", key);
}

/** 32 URL-safe characters (192 random bits), safe in a URI and a shell word alike. */
export function generatePassword(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * The container security context of the local backends' pods: PostgreSQL's own uid (the local
 * image runs as 999), nothing more than an unprivileged process needs.
 */
export function restrictedSecurityContext(): JsonObject {
  return {
    runAsNonRoot: true,
    runAsUser: 999,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
  };
}

/** A Secret key reference for a container's env. */
export function fromSecret(name: string, secret: string, key: string): JsonObject {
  return { name, valueFrom: { secretKeyRef: { name: secret, key } } };
}
