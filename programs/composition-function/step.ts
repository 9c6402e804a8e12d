/**
 * What the steps beside patch-and-transform (local-postgresql.ts, local-binding.ts,
 * network-connection.ts) take and give: plain objects in, a StepResult out, which compose.ts
 * writes into the SDK's response. Pure: nothing here reads a clock, a random source or the SDK.
 */
import type { DesiredComposed, Message } from "./patch-and-transform.js";
import { isJsonObject, type JsonObject } from "./json.js";

/** Connection details as the SDK carries them: bytes, decoded from the Secret they were read from. */
export type ConnectionDetails = Readonly<Record<string, Buffer>>;

/** A composed resource as Crossplane observed it, with the connection details it published. */
export interface ObservedResource {
  resource: JsonObject;
  connectionDetails: ConnectionDetails;
}

/**
 * A status condition for the composite resource and its claim. Crossplane keeps a condition a
 * function set until a function sets it again, so a step sets its conditions on every call, in
 * every state (a False left behind would outlive what it reported).
 */
export interface StepCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message?: string;
}

/** What Crossplane 1.20 fetches for a function (Requirements.extra_resources): objects by labels. */
export interface ExtraResourceSelector {
  apiVersion: string;
  kind: string;
  matchLabels: Record<string, string>;
}

export interface StepResult {
  /** Set in desired state by name; the ones of other names (earlier steps') stay. */
  composed: DesiredComposed[];
  /** Merged into the desired composite resource: status only, as Crossplane applies nothing else. */
  compositePatch?: JsonObject;
  /** False: the composite is not ready, whatever its composed resources say. Never true: earlier steps may disagree. */
  compositeReady?: false;
  /** Replaces the desired composite's connection details; left out, earlier steps' stay. */
  connectionDetails?: ConnectionDetails;
  /** Extra resources to ask for, by key; stated on every call, as Crossplane fetches what the last response asked. */
  requirements?: Record<string, ExtraResourceSelector>;
  conditions: StepCondition[];
  /** Warnings, shown as events on the composite and its claim. */
  results: Message[];
}

/**
 * Nothing composed and not ready: the reason as a False condition of `type`, and as a warning,
 * both on the claim too (compose.ts), with what to ask Crossplane for in the meantime.
 */
export function notReadyResult(
  type: string,
  reason: string,
  message: string,
  requirements?: Record<string, ExtraResourceSelector>,
): StepResult {
  return {
    composed: [],
    compositeReady: false,
    ...(requirements ? { requirements } : {}),
    conditions: [{ type, status: "False", reason, message }],
    results: [{ severity: "Warning", message }],
  };
}

/**
 * The composite resource lacks what a step needs to compose it at all (a claim's labels, a uid):
 * a fatal result, as no later call can do better until someone fixes it.
 */
export class CompositeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CompositeError";
  }
}

export const CLAIM_NAME_LABEL = "crossplane.io/claim-name";
export const CLAIM_NAMESPACE_LABEL = "crossplane.io/claim-namespace";

export interface Claim {
  name: string;
  namespace: string;
}

/** `kind name` of a composite resource, for messages. */
export function describe(composite: JsonObject): string {
  const meta = isJsonObject(composite.metadata) ? composite.metadata : {};
  const kind = typeof composite.kind === "string" ? composite.kind : "composite resource";
  return typeof meta.name === "string" ? `${kind} ${JSON.stringify(meta.name)}` : kind;
}

/**
 * The claim a composite resource was made for, from the labels Crossplane puts on it. The local
 * backends put their workloads in the claim's namespace, so a composite made without a claim
 * cannot be composed.
 */
export function claimOf(composite: JsonObject, step: string): Claim {
  const meta = isJsonObject(composite.metadata) ? composite.metadata : {};
  const labels = isJsonObject(meta.labels) ? meta.labels : {};
  const name = labels[CLAIM_NAME_LABEL];
  const namespace = labels[CLAIM_NAMESPACE_LABEL];
  for (const [label, value] of [
    [CLAIM_NAME_LABEL, name],
    [CLAIM_NAMESPACE_LABEL, namespace],
  ] as const)
    if (typeof value !== "string" || value === "")
      throw new CompositeError(
        `${describe(composite)} has no label ${label}; ${step} composes only composite resources made from a claim, ` +
          `whose namespace its resources go to: create the claim instead of the composite resource`,
      );
  return { name: name as string, namespace: namespace as string };
}

/** A binding's spec.instanceRef: the instance claim it binds to, in the claim's own namespace. */
export function instanceRefOf(composite: JsonObject, claim: Claim): string {
  const instanceRef = stringAt(composite, "spec", "instanceRef");
  if (!instanceRef)
    throw new CompositeError(
      `${describe(composite)} has no spec.instanceRef; set it to the name of the PostgresqlInstance claim in namespace ${JSON.stringify(claim.namespace)} to bind to`,
    );
  return instanceRef;
}

/** The composite resource's metadata.uid: stable for its life, and unique. */
export function uidOf(composite: JsonObject, step: string): string {
  const meta = isJsonObject(composite.metadata) ? composite.metadata : {};
  if (typeof meta.uid !== "string" || meta.uid === "")
    throw new CompositeError(
      `${describe(composite)} has no metadata.uid; ${step} names its credentials by it (Crossplane sends the composite as the API server stores it, uid included)`,
    );
  return meta.uid;
}

/** The condition of `type` in an object's status.conditions, if it has one. */
export function conditionOf(object: JsonObject | undefined, type: string): JsonObject | undefined {
  const status = isJsonObject(object?.status) ? object.status : {};
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]) : [];
  return conditions.find((c): c is JsonObject => isJsonObject(c) && c.type === type);
}

/** Whether an observed object's Ready condition is True: how Crossplane and its providers say ready. */
export function isReadyTrue(object: JsonObject | undefined): boolean {
  return conditionOf(object, "Ready")?.status === "True";
}

/** The string at a path of plain objects, if there is a non-empty one. */
export function stringAt(object: unknown, ...path: string[]): string | undefined {
  let current = object;
  for (const key of path) {
    if (!isJsonObject(current) || !Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = current[key];
  }
  return typeof current === "string" && current !== "" ? current : undefined;
}
