import { strict as assert } from "node:assert";
import type * as k8s from "@kubernetes/client-node";
import { LeaderElector, type LeaseApi } from "./leader";

/**
 * A Lease store that behaves as the API server does for these calls: a replace carrying a stale
 * resourceVersion is refused with 409. `replaceDelayMs` holds every replace for a while, so a
 * renewal can be caught in flight.
 */
class FakeLeases implements LeaseApi {
  lease?: k8s.V1Lease;
  private version = 0;
  replaceDelayMs = 0;
  replaces = 0;

  readNamespacedLease(): Promise<k8s.V1Lease> {
    if (!this.lease) return Promise.reject(Object.assign(new Error("not found"), { code: 404 }));
    return Promise.resolve(structuredClone(this.lease));
  }

  createNamespacedLease(req: { body: k8s.V1Lease }): Promise<k8s.V1Lease> {
    if (this.lease) return Promise.reject(Object.assign(new Error("exists"), { code: 409 }));
    this.lease = { ...req.body, metadata: { ...req.body.metadata, resourceVersion: String(++this.version) } };
    return Promise.resolve(structuredClone(this.lease));
  }

  async replaceNamespacedLease(req: { body: k8s.V1Lease }): Promise<k8s.V1Lease> {
    this.replaces++;
    const sent = req.body.metadata?.resourceVersion;
    await new Promise((r) => setTimeout(r, this.replaceDelayMs));
    if (sent !== this.lease?.metadata?.resourceVersion) {
      throw Object.assign(new Error("conflict"), { code: 409 });
    }
    this.lease = { ...req.body, metadata: { ...req.body.metadata, resourceVersion: String(++this.version) } };
    return structuredClone(this.lease);
  }
}

const TIMING = { leaseDurationSeconds: 3, renewDeadlineSeconds: 2, retryPeriodSeconds: 0.05 };

function elector(api: FakeLeases): LeaderElector {
  return new LeaderElector({
    kubeconfig: undefined,
    api,
    namespace: "klutch-network",
    name: "klutch-bridge",
    identity: "bridge-a",
    log: () => undefined,
    timing: TIMING,
  });
}

/** A store and an elector of it that has taken the lease. */
async function leading(): Promise<{ api: FakeLeases; e: LeaderElector }> {
  const api = new FakeLeases();
  const e = elector(api);
  await e.run(() => assert.fail("lost"));
  return { api, e };
}

describe("LeaderElector.release", () => {
  it("empties the holder, so a standby takes over at its next retry", async () => {
    const { api, e } = await leading();
    assert.equal(api.lease?.spec?.holderIdentity, "bridge-a");
    await e.release();
    assert.equal(api.lease?.spec?.holderIdentity, "");
  });

  it("waits for a renewal in flight instead of losing to it with a conflict", async () => {
    const { api, e } = await leading();
    // Every replace now takes 100 ms: the next renewal (every 50 ms) is caught in flight.
    api.replaceDelayMs = 100;
    const before = api.replaces;
    while (api.replaces === before) await new Promise((r) => setTimeout(r, 5));
    await e.release();
    assert.equal(api.lease?.spec?.holderIdentity, "");
  });

  it("reads again after a conflict and releases what is still its own", async () => {
    const { api, e } = await leading();
    e.stop();
    // Someone else's write of the same record (a renewal of another client of this identity's
    // lease, an annotation) lands between the release's read and its replace, once.
    const replace = api.replaceNamespacedLease.bind(api);
    let interfered = false;
    api.replaceNamespacedLease = async (req) => {
      if (!interfered) {
        interfered = true;
        api.lease = { ...api.lease, metadata: { ...api.lease?.metadata, resourceVersion: "999" } };
      }
      return replace(req);
    };
    await e.release();
    assert.ok(interfered);
    assert.equal(api.lease?.spec?.holderIdentity, "");
  });

  it("leaves a lease another bridge holds alone", async () => {
    const { api, e } = await leading();
    e.stop();
    api.lease = { ...api.lease, spec: { ...api.lease?.spec, holderIdentity: "bridge-b" } };
    await e.release();
    assert.equal(api.lease?.spec?.holderIdentity, "bridge-b");
  });
});
