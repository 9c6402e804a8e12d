import * as k8s from "@kubernetes/client-node";
import type { Stack } from "@pulumi/pulumi/automation";
import {
  objectsByCluster,
  terminatingMessage,
  type StateResource,
  type TerminatingObject,
} from "../lib/lifecycle/stack-objects";

/**
 * Before `up` or `preview`: the objects of the stack that are being deleted on their cluster
 * (lib/lifecycle/stack-objects.ts says why the engine cannot see them). Unreachable clusters
 * are skipped: the engine reports those itself.
 */
export async function terminatingObjects(stack: Stack): Promise<TerminatingObject[]> {
  const deployment = (await stack.exportStack()).deployment as { resources?: StateResource[] };
  const found: TerminatingObject[] = [];
  for (const cluster of objectsByCluster(deployment.resources ?? [])) {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig);
    const api = k8s.KubernetesObjectApi.makeApiClient(kc);
    let reachable = true;
    const look = async (o: (typeof cluster.objects)[number]) => {
      if (!reachable) return;
      try {
        const live = await api.read({
          apiVersion: o.apiVersion,
          kind: o.kind,
          metadata: { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) },
        });
        const since = live.metadata?.deletionTimestamp;
        if (since)
          found.push({
            apiVersion: o.apiVersion,
            kind: o.kind,
            name: o.name,
            ...(o.namespace ? { namespace: o.namespace } : {}),
            since: new Date(since).toISOString(),
            finalizers: live.metadata?.finalizers ?? [],
          });
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === undefined) reachable = false; // connection refused, DNS: not this check's job
      }
    };
    // A few at a time: a stack has some hundred objects, each one GET.
    for (let i = 0; i < cluster.objects.length; i += 16)
      await Promise.all(cluster.objects.slice(i, i + 16).map(look));
  }
  return found;
}

/**
 * Waits while objects of the stack are being deleted, then lets the caller re-read the state
 * so the run re-creates them; throws, naming each and what holds it, if they stay.
 */
export async function awaitTerminating(
  stack: Stack,
  out: (text: string) => void,
  timeoutSeconds = 180,
): Promise<boolean> {
  const started = Date.now();
  let objects = await terminatingObjects(stack);
  if (objects.length === 0) return false;
  out(
    `${objects.length} object(s) of this stack are being deleted (${objects
      .slice(0, 5)
      .map((o) => `${o.kind} ${o.name}`)
      .join(
        ", ",
      )}${objects.length > 5 ? ", …" : ""}); waiting up to ${timeoutSeconds}s for them to go, then re-reading the state so they are created again\n`,
  );
  let lastReport = Date.now();
  while (objects.length > 0) {
    if (Date.now() - started > timeoutSeconds * 1000)
      throw new Error(terminatingMessage(stack.name, objects, Math.round((Date.now() - started) / 1000)));
    await new Promise((r) => setTimeout(r, 3000));
    objects = await terminatingObjects(stack);
    if (Date.now() - lastReport > 15_000 && objects.length > 0) {
      lastReport = Date.now();
      out(`  still being deleted: ${objects.length} (${Math.round((Date.now() - started) / 1000)}s)\n`);
    }
  }
  return true;
}
