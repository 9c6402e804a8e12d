import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import {
  composedRefs,
  describeSnapshot,
  drained,
  drainKinds,
  drainTimeoutMessage,
  refKey,
  type DrainKind,
  type DrainSnapshot,
  type ObjectRef,
} from "../../lib/lifecycle/drain-plan";
import { statusCode } from "./kube-errors";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource } from "./klutch-resource";

/**
 * The teardown's first step: a resource whose delete releases every claim and composite on the
 * control plane, and waits until what they composed is gone, while Crossplane, its providers,
 * the bridge and the konnectors still run (lib/lifecycle/drain-plan.ts says why).
 *
 * Pulumi deletes a resource only after everything that depends on it (the engine's delete
 * antichains, pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go ScheduleDeletes).
 * This resource depends on Crossplane, the connector API, the data-service API, the bridge and
 * the app-cluster bindings, so it is created last (a no-op) and deleted first; if it cannot
 * finish, the destroy stops before any of them is touched and can simply be run again.
 *
 * Its diff never asks for a replacement: a replacement would delete the old one, which drains
 * every claim in the middle of an ordinary `up`.
 *
 * As in export-request.ts, @kubernetes/client-node is required at run time in the dynamic
 * provider's process.
 */

export interface TeardownDrainInputs {
  /** Admin kubeconfig of the control plane (a secret). */
  kubeconfig: string;
  /**
   * Admin kubeconfigs of the app clusters, by name (a secret). The konnector there syncs each
   * consumer object to its claim and would write a deleted claim back, so the consumer's own
   * objects are deleted too (kube-bind's model: the consumer side is the source of truth).
   */
  appClusterKubeconfigs: Record<string, string>;
  timeoutSeconds: number;
}

const XRD = { group: "apiextensions.crossplane.io", version: "v1", plural: "compositeresourcedefinitions" };

function apis(kubeconfig: string) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  kc.loadFromString(kubeconfig);
  return {
    custom: kc.makeApiClient(lib.CustomObjectsApi),
    objects: lib.KubernetesObjectApi.makeApiClient(kc),
  };
}
type Apis = ReturnType<typeof apis>;

interface Listed {
  metadata: { name: string; namespace?: string; deletionTimestamp?: string };
  spec?: { claimRef?: unknown };
}

/** Every object of a plural, in all namespaces; none when the API does not exist there. */
async function listAll(api: Apis, group: string, version: string, plural: string): Promise<Listed[]> {
  try {
    const list = (await api.custom.listClusterCustomObject({ group, version, plural })) as {
      items?: Listed[];
    };
    return list.items ?? [];
  } catch (err) {
    if (statusCode(err) === 404) return [];
    throw err;
  }
}

async function deleteQuietly(api: Apis, group: string, version: string, plural: string, o: Listed) {
  if (o.metadata.deletionTimestamp) return;
  const { name, namespace } = o.metadata;
  try {
    if (namespace) await api.custom.deleteNamespacedCustomObject({ group, version, plural, namespace, name });
    else await api.custom.deleteClusterCustomObject({ group, version, plural, name });
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
  }
}

async function exists(api: Apis, ref: ObjectRef): Promise<boolean> {
  try {
    await api.objects.read({
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
    });
    return true;
  } catch (err) {
    // 404: gone, or its kind is gone with it.
    if (statusCode(err) === 404) return false;
    throw err;
  }
}

const refOf = (kind: DrainKind, claim: boolean, o: Listed): ObjectRef => ({
  apiVersion: `${kind.group}/${kind.version}`,
  kind: (claim ? kind.claimKind : kind.compositeKind) ?? kind.compositeKind,
  name: o.metadata.name,
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deletes the consumers' own objects of the bound kinds on each reachable app cluster. */
async function drainAppClusters(kubeconfigs: Record<string, string>, kinds: DrainKind[]) {
  for (const [cluster, kubeconfig] of Object.entries(kubeconfigs)) {
    try {
      const api = apis(kubeconfig);
      for (const kind of kinds) {
        if (!kind.claimPlural) continue;
        for (const o of await listAll(api, kind.group, kind.version, kind.claimPlural))
          await deleteQuietly(api, kind.group, kind.version, kind.claimPlural, o);
      }
    } catch (err) {
      // An app cluster that is already gone has no konnector left to write claims back.
      console.error(`teardown: app cluster ${cluster} not drained (${(err as Error).message}); going on`);
    }
  }
}

async function drain(inputs: TeardownDrainInputs): Promise<void> {
  const started = Date.now();
  const deadline = started + inputs.timeoutSeconds * 1000;
  const api = apis(inputs.kubeconfig);
  const kinds = drainKinds(await listAll(api, XRD.group, XRD.version, XRD.plural));
  if (kinds.length === 0) return;

  await drainAppClusters(inputs.appClusterKubeconfigs, kinds);

  // Every composed object seen on any look is waited for, also those of XRs gone meanwhile.
  const composed = new Map<string, ObjectRef>();
  const look = async (): Promise<DrainSnapshot> => {
    const snapshot: DrainSnapshot = { claims: [], composites: [], composed: [] };
    for (const kind of kinds) {
      if (kind.claimPlural)
        for (const o of await listAll(api, kind.group, kind.version, kind.claimPlural))
          snapshot.claims.push(refOf(kind, true, o));
      for (const o of await listAll(api, kind.group, kind.version, kind.compositePlural)) {
        snapshot.composites.push(refOf(kind, false, o));
        for (const ref of composedRefs(o)) composed.set(refKey(ref), ref);
      }
    }
    for (const [key, ref] of composed) {
      if (await exists(api, ref)) snapshot.composed.push(ref);
      else composed.delete(key);
    }
    return snapshot;
  };

  let lastReport = 0;
  const waitFor = async (what: string, done: (s: DrainSnapshot) => boolean, poke: () => Promise<void>) => {
    for (;;) {
      await poke();
      const snapshot = await look();
      if (done(snapshot)) return snapshot;
      if (Date.now() > deadline) throw new Error(drainTimeoutMessage(snapshot, inputs.timeoutSeconds));
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        const took = Math.round((Date.now() - started) / 1000);
        console.error(`teardown: ${what} (${took}s): ${describeSnapshot(snapshot)}`);
      }
      await sleep(2000);
    }
  };

  // Claims that act on another claim first (bindings, backups, restores), then the rest.
  for (const stage of [0, 1] as const) {
    const staged = kinds.filter((k) => k.stage === stage && k.claimPlural);
    if (staged.length === 0) continue;
    const claimsOf = async () => {
      for (const kind of staged)
        for (const o of await listAll(api, kind.group, kind.version, kind.claimPlural ?? ""))
          await deleteQuietly(api, kind.group, kind.version, kind.claimPlural ?? "", o);
    };
    const stagedKinds = new Set(staged.map((k) => k.claimKind));
    await waitFor(
      stage === 0 ? "releasing bindings" : "releasing claims",
      (s) => !s.claims.some((c) => stagedKinds.has(c.kind)),
      claimsOf,
    );
  }
  // Composites made without a claim, then everything they composed.
  const final = await waitFor("releasing what the claims composed", drained, async () => {
    for (const kind of kinds)
      for (const o of await listAll(api, kind.group, kind.version, kind.compositePlural))
        await deleteQuietly(api, kind.group, kind.version, kind.compositePlural, o);
  });
  const took = Math.round((Date.now() - started) / 1000);
  console.error(`teardown: every claim and what it composed is gone (${took}s, ${describeSnapshot(final)})`);
}

export const teardownDrainProvider: CompleteProvider<
  TeardownDrainInputs,
  TeardownDrainInputs,
  "create" | "diff" | "update" | "delete"
> = {
  create(inputs) {
    return Promise.resolve({ id: "teardown-drain", outs: inputs });
  },

  diff(_id, olds, news) {
    const changes = (["kubeconfig", "appClusterKubeconfigs", "timeoutSeconds"] as const).some(
      (k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]),
    );
    // Never a replacement (see the file comment).
    return Promise.resolve({ changes, replaces: [] });
  },

  update(_id, _olds, news) {
    return Promise.resolve({ outs: news });
  },

  async delete(_id, props) {
    await drain(props);
  },
};

export interface TeardownDrainArgs {
  kubeconfig: pulumi.Input<string>;
  appClusterKubeconfigs: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** How long the drain may take before the destroy stops with what is left (default 900). */
  timeoutSeconds?: pulumi.Input<number>;
}

/** See the file comment. Give it `dependsOn` on everything that must outlive the drain. */
export class TeardownDrain extends KlutchResource {
  constructor(name: string, args: TeardownDrainArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      teardownDrainProvider,
      name,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        appClusterKubeconfigs: pulumi.secret(args.appClusterKubeconfigs),
        timeoutSeconds: args.timeoutSeconds ?? 900,
      },
      {
        ...opts,
        additionalSecretOutputs: [
          ...(opts?.additionalSecretOutputs ?? []),
          "kubeconfig",
          "appClusterKubeconfigs",
        ],
      },
      "klutch",
      "TeardownDrain",
    );
  }
}
