import type { NetworkPathObject } from "../../../lib/bridge/model";
import { pathId } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";

/**
 * Whether the WireGuard gateway serves a group's paths, from its pods as the API server lists
 * them (network/wireguard/path-health.ts). Pure.
 *
 * Every path of every app cluster's client goes through the one gateway on the data-service
 * cluster (wireguard-tunnel.ts): with no Ready gateway pod (its readiness probe: wireguard-go
 * listening and the flows filter loaded, render-k8s.ts) no connection through the tunnel reaches
 * an instance, whatever the group's run published. With one, the path is left as its run
 * reported it: the client's side is in the app cluster, which the bridge holds no credentials for.
 */

/** The gateway pods' selector, from the tunnel's name (render-k8s.ts labels them so). */
export function gatewaySelector(tunnel: string): string {
  return `app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/instance=${tunnel},app.kubernetes.io/component=gateway`;
}

/** What of a pod says it serves: not being deleted, and its Ready condition. */
export interface GatewayPodLike {
  metadata?: { name?: string; deletionTimestamp?: unknown };
  status?: { conditions?: { type: string; status: string }[] };
}

export function podServes(p: GatewayPodLike): boolean {
  return (
    !p.metadata?.deletionTimestamp &&
    (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** Each path's health from the gateway's pods: all unusable while none serves, else each usable as far as the gateway goes. */
export function judgeGateway(
  gateway: { namespace: string; name: string },
  pods: readonly GatewayPodLike[],
  live: readonly Pick<NetworkPathObject, "metadata" | "spec">[],
): Record<string, PathHealth> {
  const serving = pods.some(podServes);
  const where = `${gateway.namespace}/${gateway.name}`;
  const health: PathHealth = serving
    ? { ready: true, reason: "ConnectivityEstablished", message: `the WireGuard gateway ${where} serves` }
    : {
        ready: false,
        reason: "GatewayUnavailable",
        message:
          pods.length === 0
            ? `the WireGuard gateway ${where} has no pod, so no connection through the tunnel reaches an instance; its Deployment makes one again (or the environment's next \`pulumi up\` does)`
            : `no pod of the WireGuard gateway ${where} is Ready (${pods.map((p) => p.metadata?.name ?? "?").join(", ")}: wireguard-go listening and its filter loaded), so no connection through the tunnel reaches an instance`,
      };
  return Object.fromEntries(live.map((p) => [pathId(p), health]));
}
