import * as k8s from "@kubernetes/client-node";
import type { Stack } from "@pulumi/pulumi/automation";
import type { ObjectRef } from "../../lib/lifecycle/drain-plan";
import {
  lookupsByKind,
  objectsByCluster,
  terminatingAmong,
  terminatingMessage,
  terminatingObject,
  type LiveObject,
  type ObjectLookup,
  type StateResource,
  type TerminatingObject,
} from "../../lib/lifecycle/stack-objects";

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
    found.push(...(await terminatingOnCluster(k8s.KubernetesObjectApi.makeApiClient(kc), cluster.objects)));
  }
  return found;
}

/** The two calls of KubernetesObjectApi the look makes. */
export interface ObjectReader {
  read(spec: {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string };
  }): Promise<LiveObject>;
  list(apiVersion: string, kind: string, namespace?: string): Promise<{ items: LiveObject[] }>;
}

/**
 * The terminating objects among one cluster's: one LIST per kind and namespace, one GET for an
 * object alone of its kind there (a list would fetch every object of that kind for it). An
 * object the API server does not have is not terminating; any other HTTP error counts the same,
 * and an unreachable cluster (no HTTP status) ends the look there.
 */
export async function terminatingOnCluster(
  api: ObjectReader,
  objects: readonly ObjectRef[],
): Promise<TerminatingObject[]> {
  let reachable = true;
  /** What a request finds, and the HTTP status it failed with. */
  const ask = async (
    request: () => Promise<TerminatingObject[]>,
  ): Promise<{ found: TerminatingObject[]; code?: number }> => {
    if (!reachable) return { found: [] };
    try {
      return { found: await request() };
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === undefined) reachable = false; // connection refused, DNS: not this check's job
      return { found: [], code };
    }
  };
  const read = (o: ObjectRef) => async () => {
    const live = await api.read({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) },
    });
    const terminating = terminatingObject(o, live);
    return terminating ? [terminating] : [];
  };
  const look = async (lookup: ObjectLookup): Promise<TerminatingObject[]> => {
    const [only] = lookup.objects;
    if (only && lookup.objects.length === 1) return (await ask(read(only))).found;
    const listed = await ask(async () =>
      terminatingAmong(lookup, (await api.list(lookup.apiVersion, lookup.kind, lookup.namespace)).items),
    );
    // 404: the kind is not served, so no GET would find them. Another refusal (a role that may
    // get but not list, an overloaded server) says nothing of the objects: ask for each.
    if (listed.code === undefined || listed.code === 404) return listed.found;
    const found: TerminatingObject[] = [];
    for (const o of lookup.objects) found.push(...(await ask(read(o))).found);
    return found;
  };
  // A few requests at a time.
  const lookups = lookupsByKind(objects);
  const found: TerminatingObject[] = [];
  for (let i = 0; i < lookups.length; i += 16)
    for (const some of await Promise.all(lookups.slice(i, i + 16).map(look))) found.push(...some);
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
