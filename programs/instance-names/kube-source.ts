/**
 * The watcher's claims from the app cluster's API server (@kubernetes/client-node 2.0.1): a
 * cluster-wide list of a custom resource, and a watch from the list's resourceVersion. Not the
 * client's informer: it keeps its own copy of every object and, stopped by an error, leaves
 * restarting to its user anyway; the watcher keeps the claims and decides when to relist.
 */
import * as k8s from "@kubernetes/client-node";
import type { ClaimSource, WatchedClaim } from "./claim-feed";

export const DEFAULT_RESOURCE = "anynines.com/v1/servicebindings";

/** `group/version/plural` of `--resource`, checked. */
export function parseResource(text: string): { group: string; version: string; plural: string } {
  const m = /^([a-z0-9]([a-z0-9.-]*[a-z0-9])?)\/(v[a-z0-9]+)\/([a-z0-9]([a-z0-9-]*[a-z0-9])?)$/.exec(text);
  if (!m)
    throw new Error(
      `--resource "${text}" must be GROUP/VERSION/PLURAL of a custom resource, e.g. ${DEFAULT_RESOURCE}`,
    );
  return { group: m[1] as string, version: m[3] as string, plural: m[4] as string };
}

/** What the source uses of client-node's Watch (a fake one in the tests). */
export type WatchLike = Pick<k8s.Watch, "watch">;

const PHASES = { ADDED: "add", MODIFIED: "update", DELETED: "delete", BOOKMARK: "bookmark" } as const;

export function claimSource(
  kc: k8s.KubeConfig,
  resource: string,
  watch: WatchLike = new k8s.Watch(kc),
): ClaimSource {
  const { group, version, plural } = parseResource(resource);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  return {
    resource,
    async list() {
      const list = (await api.listClusterCustomObject({ group, version, plural })) as {
        items?: WatchedClaim[];
        metadata?: { resourceVersion?: string };
      };
      return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? "" };
    },
    async watch(resourceVersion, event, done) {
      // Filled in once the request is made; an event cannot come before, but a closure must not trip on it.
      const request: { controller?: AbortController } = {};
      request.controller = await watch.watch(
        `/apis/${group}/${version}/${plural}`,
        // Bookmarks move the version on while nothing changes, so a watch started again after the
        // client's inactivity timeout (30 s in client-node 2.0) seldom finds its version expired.
        { resourceVersion, allowWatchBookmarks: true },
        (phase: string, obj: unknown) => {
          if (phase === "ERROR") {
            // A Status, e.g. 410 Expired: this watch can go no further; the watcher relists.
            const status = obj as { code?: number; message?: string } | undefined;
            done(Object.assign(new Error(status?.message ?? "watch error"), { code: status?.code }));
            request.controller?.abort();
          } else if (phase in PHASES) event(PHASES[phase as keyof typeof PHASES], obj as WatchedClaim);
        },
        // Ended by the server, or by the client's inactivity timeout: an ordinary end, watched again.
        (err: unknown) =>
          done(err === null || err === undefined || (err as Error).name === "TimeoutError" ? undefined : err),
      );
      return { stop: () => request.controller?.abort() };
    },
  };
}
