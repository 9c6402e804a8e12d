/**
 * What the local backend's Backup and Restore steps share: the names they give what they compose,
 * the service-type check, and what an observed pod says about a failing run, in words for the claim.
 */
import { isJsonObject, type JsonObject } from "./json.js";
import { CompositeError, notReadyResult, stringAt, type Claim, type StepResult } from "./step.js";

/** The one spec.serviceInstanceType the local backend serves: its instances are PostgresqlInstances. */
export const LOCAL_SERVICE_TYPE = "postgresql";

/**
 * `<claim>-<suffix>`, which names a Service too, so a DNS-1035 label: refused here with the fix,
 * rather than by the API server in provider-kubernetes' status.
 */
export function resourceName(claim: Claim, suffix: string, kind: string): string {
  const name = `${claim.name}-${suffix}`;
  if (name.length > 63 || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))
    throw new CompositeError(
      `${kind} claim ${JSON.stringify(claim.name)} would get Service ${JSON.stringify(name)}, which is not a DNS-1035 label; ` +
        `name the claim with at most ${62 - suffix.length} lower-case letters, digits and "-", starting with a letter`,
    );
  return name;
}

/** Not ready, saying why, when spec.serviceInstanceType is not the local backend's one type. */
export function serviceTypeRefusal(
  composite: JsonObject,
  conditionType: string,
  does: string,
): StepResult | undefined {
  const type = stringAt(composite, "spec", "serviceInstanceType");
  if (type === LOCAL_SERVICE_TYPE) return undefined;
  return notReadyResult(
    conditionType,
    "UnsupportedServiceType",
    `spec.serviceInstanceType is ${JSON.stringify(type ?? "")}: this backend ${does} ${LOCAL_SERVICE_TYPE} only; set serviceInstanceType: ${LOCAL_SERVICE_TYPE}, or use the composition of that type's backend`,
  );
}

/** The pod an observed provider-kubernetes Object applied, as it reads it back (status.atProvider.manifest). */
export function observedPod(object: JsonObject | undefined): JsonObject | undefined {
  const status = isJsonObject(object?.status) ? object.status : {};
  const atProvider = isJsonObject(status.atProvider) ? status.atProvider : {};
  return isJsonObject(atProvider.manifest) ? atProvider.manifest : undefined;
}

/**
 * Why a pod's one container is not getting on, if it is not: how often it failed and its last
 * termination message (the last lines of its log, FallbackToLogsOnError), or why it is waiting.
 */
export function podTrouble(pod: JsonObject | undefined): string | undefined {
  const status = isJsonObject(pod?.status) ? pod.status : {};
  const containers = Array.isArray(status.containerStatuses) ? status.containerStatuses : [];
  const first = containers.find(isJsonObject);
  if (!first) return undefined;
  const restarts = typeof first.restartCount === "number" ? first.restartCount : 0;
  const last = stringAt(first, "lastState", "terminated", "message")?.trim();
  const waiting = stringAt(first, "state", "waiting", "reason");
  const waitingWhy =
    waiting && waiting !== "ContainerCreating" && waiting !== "PodInitializing" ? waiting : undefined;
  if (restarts === 0 && !waitingWhy) return undefined;
  const parts = [
    ...(restarts > 0 ? [`failed ${restarts} time${restarts === 1 ? "" : "s"}`] : []),
    ...(waitingWhy ? [waitingWhy] : []),
    ...(last ? [`last said: ${last.split("\n").slice(-3).join(" / ")}`] : []),
  ];
  return parts.join("; ");
}
