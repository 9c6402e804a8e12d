/**
 * The shapes of the Kubernetes objects the slow tests read back with `kubectl -o json`, and the
 * small questions they ask of them (is this pod Ready, has this claim an endpoint), in one place
 * so every file reads an object the same way.
 */
import { eventually, kubectlJson, kubectlTry } from "./kubectl";

/** A status condition, as pods and claims carry them. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
}

/** A pod as kubectl prints it: the fields the tests look at. */
export interface Pod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec: { containers: { name: string; image?: string; securityContext?: Record<string, unknown> }[] };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: Condition[];
    containerStatuses?: {
      name: string;
      /** `<runtime>://<id>`; the kubelet's cgroupfs driver names the container's cgroup by the id. */
      containerID?: string;
      /** The image the runtime resolved: `<repository>@sha256:<manifest digest>` when containerd holds that name. */
      imageID?: string;
      ready: boolean;
      restartCount: number;
      state?: { waiting?: { reason?: string } };
      lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
    }[];
  };
}

/** A TCPConnection claim as kubectl prints it. */
export interface Claim {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { resourceRef?: { name: string } };
  status?: { hostForConsumer?: string; port?: number; conditions?: Condition[] };
}

/** Whether a pod's Ready condition is True. */
export const podReady = (p: Pod): boolean =>
  p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;

/**
 * Whether a claim is usable: Ready=True and an endpoint written. Ready alone is not enough, as
 * Crossplane may mark it Ready before the bridge's status reaches the claim.
 */
export const isClaimReady = (c: Claim | undefined): boolean =>
  Boolean(c?.status?.hostForConsumer && c.status.port) &&
  c?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") === true;

/** The pods of a namespace matching `selector`, without those being deleted (a rollout's old ones). */
export function livePods(kubeconfig: string, namespace: string, selector: string): Pod[] {
  return kubectlJson<{ items: Pod[] }>(kubeconfig, [
    "get",
    "pods",
    "-n",
    namespace,
    "-l",
    selector,
  ]).items.filter((p) => !p.metadata.deletionTimestamp);
}

/** The last lines of each pod's log, headed by its name: what a failure message needs of them. */
export function podLogTails(kubeconfig: string, namespace: string, pods: Pod[], lines = 25): string {
  return pods
    .map((p) => {
      const r = kubectlTry(kubeconfig, ["-n", namespace, "logs", p.metadata.name, `--tail=${lines}`]);
      return `--- ${p.metadata.name}:\n${r.stdout}${r.stderr}`;
    })
    .join("\n");
}

/**
 * Why pods are or are not Ready, for an assertion's message: each pod's conditions and its
 * containers' readiness, restarts and last termination, then the namespace's latest events
 * (probe failures, kills, reschedules), as a bare `false` does not say which of them changed.
 */
export function podDiagnosis(kubeconfig: string, namespace: string, selector: string): string {
  const raw = kubectlTry(kubeconfig, ["get", "pods", "-n", namespace, "-l", selector, "-o", "json"]);
  const pods = raw.status === 0 ? (JSON.parse(raw.stdout) as { items: Pod[] }).items : [];
  const lines = pods.map((p) =>
    [
      `pod ${p.metadata.name}${p.metadata.deletionTimestamp ? " (being deleted)" : ""}: ${p.status.phase ?? "?"}`,
      ...(p.status.conditions ?? []).map((c) => `  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}`),
      ...(p.status.containerStatuses ?? []).map(
        (c) =>
          `  container ${c.name}: ready=${c.ready} restarts=${c.restartCount} ${JSON.stringify(c.state ?? {})}` +
          (c.lastState ? ` last ${JSON.stringify(c.lastState)}` : ""),
      ),
    ].join("\n"),
  );
  const events = kubectlTry(kubeconfig, ["get", "events", "-n", namespace, "--sort-by=.lastTimestamp"]);
  const tail = `${events.stdout}${events.stderr}`.trimEnd().split("\n").slice(-20).join("\n");
  return [
    `pods ${namespace} -l ${selector}: ${pods.length === 0 ? "none" : ""}`,
    ...lines,
    "events:",
    tail,
  ].join("\n");
}

/** The condition `type` of the object `kind/name` in `namespace` (a claim, a binding), as it is now. */
export function objectCondition(
  kubeconfig: string,
  namespace: string,
  kind: string,
  name: string,
  type: string,
): (Condition & { message?: string }) | undefined {
  return kubectlJson<{ status?: { conditions?: (Condition & { message?: string })[] } }>(kubeconfig, [
    "-n",
    namespace,
    "get",
    kind,
    name,
  ]).status?.conditions?.find((c) => c.type === type);
}

/** The TCPConnection claims of a namespace. */
export function claimsIn(kubeconfig: string, namespace: string): Claim[] {
  return kubectlJson<{ items: Claim[] }>(kubeconfig, ["-n", namespace, "get", "tcpconnections"]).items;
}

export interface ClaimWait {
  /** What is awaited, for the timeout's message. */
  what?: string;
  /** When the claim is as wanted; Ready with an endpoint unless given. */
  check?: (claim: Claim | undefined) => boolean;
  timeoutMs?: number;
  /** What to add to the timeout's message: the claim last seen, logs of the parties. */
  diagnose?: (last: Claim | undefined) => string;
}

/**
 * Polls the claim `namespace/name` until `check` holds and returns it; on timeout the error
 * carries what `diagnose` tells, as a bare timeout does not say which party stalled.
 */
export async function waitForClaim(
  kubeconfig: string,
  namespace: string,
  name: string,
  wait: ClaimWait = {},
): Promise<Claim> {
  const check = wait.check ?? isClaimReady;
  let last: Claim | undefined;
  await eventually(
    wait.what ?? `TCPConnection ${namespace}/${name} to be Ready with an endpoint`,
    () => {
      last = claimsIn(kubeconfig, namespace).find((c) => c.metadata.name === name);
      return check(last);
    },
    wait.timeoutMs,
  ).catch((e: Error) => {
    throw new Error(wait.diagnose ? `${e.message}\n${wait.diagnose(last)}` : e.message);
  });
  return last as Claim;
}

/**
 * A TCPConnection claim to PostgreSQL, as JSON for `kubectl apply`: on loopback unless `host`
 * says, `spec` adding fields (a composition selector, other enhancements).
 */
export const claimYaml = (
  name: string,
  namespace: string,
  port: number,
  host = "127.0.0.1",
  spec: Record<string, unknown> = {},
): string =>
  JSON.stringify({
    apiVersion: "klutch.anynines.com/v1",
    kind: "TCPConnection",
    metadata: { name, namespace },
    spec: { instanceHost: host, port, enhancements: [{ InstanceType: "PostgreSQL" }], ...spec },
  });

/** The claim spec's fields that pick the composition of one implementation (proxy, wireguard, …). */
export const implementationSelector = (implementation: string): Record<string, unknown> => ({
  compositionSelector: { matchLabels: { "klutch.anynines.com/implementation": implementation } },
});
