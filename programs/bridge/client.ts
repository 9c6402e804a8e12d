import * as k8s from "@kubernetes/client-node";
import {
  BRIDGE_FINALIZER,
  NETWORK_PATH_GROUP,
  NETWORK_PATH_PLURAL,
  NETWORK_PATH_VERSION,
  type NetworkPathObject,
} from "../../lib/bridge/api";
import { compositeNudge } from "../../lib/bridge/grouping";
import { relayStep } from "../../lib/bridge/readiness-relay";
import { isReady } from "../../lib/kube/owner-conditions";
import { isNotFound } from "../../lib/kube/client-errors";
import { COMPOSITE_PLURAL } from "../../lib/connector-api/names";
import { SETTINGS_KEY, type BridgeSettings } from "../../lib/bridge/settings";
import { parseBridgeSettings } from "../../network/group-settings";

export type PathStatus = NonNullable<NetworkPathObject["status"]>;

/** The bridge's writes to the control plane (a fake one in the reconciler's unit tests). */
export interface PathWriter {
  addFinalizer(p: NetworkPathObject): Promise<void>;
  /** Lets the path go; a path already gone is fine. */
  removeFinalizer(p: NetworkPathObject): Promise<void>;
  writeStatus(p: NetworkPathObject, status: PathStatus): Promise<void>;
  /**
   * Asks Crossplane to reconcile the path's composite now (see compositeNudge), and relays the
   * readiness of `status` (just written) on to the composite's owner (readiness-relay.ts).
   */
  nudgeComposite(p: NetworkPathObject, status: PathStatus): Promise<void>;
  /** The environment's settings for the bridge; undefined when there are none. */
  readSettings(): Promise<BridgeSettings | undefined>;
}

const mergePatch = () => k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

/** How often, and how long, a composite is read back until Crossplane marks it Ready (15 s). */
const RELAY_INTERVAL_MS = 500;
const RELAY_ATTEMPTS = 30;

export class KubePathWriter implements PathWriter {
  private readonly api: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;

  constructor(
    kc: k8s.KubeConfig,
    private readonly settings?: { namespace: string; name: string },
  ) {
    this.api = kc.makeApiClient(k8s.CustomObjectsApi);
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  /**
   * Sets a path's finalizers: a merge patch carrying the resourceVersion the list was computed
   * from, so a concurrent change (another writer's finalizer) fails with a conflict and the
   * group retries instead of overwriting it.
   */
  private async patchFinalizers(p: NetworkPathObject, finalizers: string[]): Promise<void> {
    await this.api.patchClusterCustomObject(
      {
        group: NETWORK_PATH_GROUP,
        version: NETWORK_PATH_VERSION,
        plural: NETWORK_PATH_PLURAL,
        name: p.metadata.name,
        body: { metadata: { finalizers, resourceVersion: p.metadata.resourceVersion } },
      },
      mergePatch(),
    );
  }

  addFinalizer(p: NetworkPathObject): Promise<void> {
    return this.patchFinalizers(p, [...(p.metadata.finalizers ?? []), BRIDGE_FINALIZER]);
  }

  async removeFinalizer(p: NetworkPathObject): Promise<void> {
    // Already gone (released by an earlier reconcile whose DELETED event has not arrived yet):
    // nothing left to let go, and no reason to fail the group's reconcile.
    await this.patchFinalizers(
      p,
      (p.metadata.finalizers ?? []).filter((f) => f !== BRIDGE_FINALIZER),
    ).catch((e: unknown) => {
      if ((e as { code?: number }).code !== 404) throw e;
    });
  }

  async writeStatus(p: NetworkPathObject, status: PathStatus): Promise<void> {
    await this.api.patchClusterCustomObjectStatus(
      {
        group: NETWORK_PATH_GROUP,
        version: NETWORK_PATH_VERSION,
        plural: NETWORK_PATH_PLURAL,
        name: p.metadata.name,
        // A merge patch keeps fields it does not name: a path that lost its port says so.
        body: { status: { hostForConsumer: null, port: null, ...status } },
      },
      mergePatch(),
    );
  }

  async nudgeComposite(p: NetworkPathObject, status: PathStatus): Promise<void> {
    const target = compositeNudge(p, new Date().toISOString());
    if (!target) return;
    await this.api
      .patchClusterCustomObject(
        {
          group: target.group,
          version: target.version,
          plural: COMPOSITE_PLURAL,
          name: target.name,
          body: { metadata: { annotations: target.annotations } },
        },
        mergePatch(),
      )
      .catch((e: unknown) => {
        // A composite deleted meanwhile has nothing left to copy.
        if ((e as { code?: number }).code !== 404) throw e;
      });
    // In the background: the group's reconcile does not wait for Crossplane. A composite
    // already followed gets the newest readiness to wait for, not a second follower.
    const following = this.relaying.has(target.name);
    this.relaying.set(target.name, isReady({ status }));
    if (!following) void this.relayReadiness(target).finally(() => this.relaying.delete(target.name));
  }

  /** Composites whose readiness is being relayed to their owner, with the readiness awaited. */
  private readonly relaying = new Map<string, boolean>();

  /**
   * Once Crossplane has made the composite's Ready what its path says (it reconciles at once on
   * the annotation above), annotates its owner when the owner waits for it (relayStep), so the
   * owner follows without Crossplane's back-off (on the way to Ready) or poll (on the way
   * back). Best effort: the owner's own retries still come; a composite with no such owner
   * costs one read.
   */
  private async relayReadiness(target: { group: string; version: string; name: string }): Promise<void> {
    const ref = { group: target.group, version: target.version, plural: COMPOSITE_PLURAL, name: target.name };
    try {
      for (let attempt = 0; attempt < RELAY_ATTEMPTS; attempt++) {
        const composite = (await this.api.getClusterCustomObject(ref)) as Parameters<typeof relayStep>[0];
        const wanted = this.relaying.get(target.name) ?? true;
        const step = relayStep(composite, wanted, new Date().toISOString());
        if (step === "none") return;
        if (step !== "wait") {
          await this.api.patchClusterCustomObject(
            { ...step, body: { metadata: { annotations: step.annotations } } },
            mergePatch(),
          );
          // A path that changed again meanwhile is followed on, not dropped.
          if (this.relaying.get(target.name) === wanted) return;
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, RELAY_INTERVAL_MS));
      }
    } catch {
      // Gone, or not readable: the owner's own retries remain.
    }
  }

  /**
   * The environment's settings for the bridge (per consumer namespace: the app cluster's
   * network connector), read on every reconcile so a changed stack takes effect at the
   * next one. Absent settings mean the command-line defaults; malformed ones fail the
   * reconcile with the field named.
   */
  async readSettings(): Promise<BridgeSettings | undefined> {
    const ref = this.settings;
    if (!ref) return undefined;
    try {
      const cm = await this.core.readNamespacedConfigMap({ name: ref.name, namespace: ref.namespace });
      const text = cm.data?.[SETTINGS_KEY];
      return text ? parseBridgeSettings(text) : undefined;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
}
