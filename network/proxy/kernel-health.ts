import type * as k8s from "@kubernetes/client-node";
import { Socket } from "node:net";
import { proxyName, type NetworkPathObject } from "../../lib/bridge/model";
import type { KubernetesTarget, PathHealth } from "../contract/implementation";
import {
  type DialOutcome,
  judgeKernelHealth,
  kernelDials,
  type KernelServiceLike,
} from "./model/kernel-health";

/** How long one dial may wait for an answer: kube-proxy's DNAT and the instance's accept are quick. */
const DIAL_TIMEOUT_MS = 1_000;
/**
 * How long a read keeps dialling a path that refuses or does not answer: kube-proxy syncs its
 * rules at most once a second by default (`--iptables-min-sync-period`, `--nftables-min-sync-period`
 * 1 s), so right after a run a path is usually carried within this; the bridge's health poll
 * (every 2 s) sees it later when not.
 */
const SETTLE_MS = 3_000;
const RETRY_EVERY_MS = 250;
/** Dials at once: a group's paths often share one instance, whose connection limit this spares. */
const CONCURRENT_DIALS = 16;

/** One TCP connection to address:port, closed as soon as it is open (no byte is sent). */
export function dialOnce(address: string, port: number, timeoutMs = DIAL_TIMEOUT_MS): Promise<DialOutcome> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (outcome: DialOutcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done("no-answer"));
    socket.once("connect", () => done("connected"));
    socket.once("error", (err: NodeJS.ErrnoException) =>
      done(err.code === "ECONNREFUSED" ? "refused" : "no-answer"),
    );
    socket.connect({ host: address, port });
  });
}

/** Dials until connected or until `settleMs` have passed; the last outcome. */
export async function dialSettled(address: string, port: number, settleMs = SETTLE_MS): Promise<DialOutcome> {
  const until = Date.now() + settleMs;
  for (;;) {
    const outcome = await dialOnce(address, port);
    if (outcome === "connected" || Date.now() + RETRY_EVERY_MS >= until) return outcome;
    await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
  }
}

/**
 * The kernel hop's health reader (used by ./path-health.ts for a `hop: kernel` target): the
 * group's Service as the data-plane identity may read it (services in its namespace,
 * lib/bridge/rbac.ts dataPlaneRules), and a dial per path at its ClusterIP port. A bridge
 * outside the cluster gets no answer from any, and says nothing (model/kernel-health.ts).
 */
export async function kernelHealth(
  core: k8s.CoreV1Api,
  key: string,
  target: KubernetesTarget,
  live: readonly NetworkPathObject[],
  settleMs = SETTLE_MS,
): Promise<Record<string, PathHealth>> {
  const name = proxyName(key);
  let service: KernelServiceLike | undefined;
  try {
    service = await core.readNamespacedService({ name, namespace: target.namespace });
  } catch (e) {
    // Not there (yet): the run that makes it reports its paths.
    if ((e as { code?: number }).code !== 404) throw e;
  }
  const dials = kernelDials(service, live);
  const outcomes: DialOutcome[] = new Array<DialOutcome>(dials.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < dials.length; i = next++) {
      outcomes[i] = await dialSettled(dials[i]!.address, dials[i]!.port, settleMs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_DIALS, dials.length) }, worker));
  return judgeKernelHealth(
    `${target.namespace}/${name}`,
    dials.map((d, i) => ({ ...d, outcome: outcomes[i]! })),
  );
}
