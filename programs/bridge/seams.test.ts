import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../lib/bridge/api";
import { BRIDGE_FINALIZER } from "../../lib/bridge/api";
import { compositeNudge, PATH_STATUS_ANNOTATION } from "../../lib/bridge/grouping";
import { pendingOperationCount } from "../../lib/bridge/checkpoint";
import { PathCache, type PathInformer } from "./cache";
import { NODE_PORT_RETRY_MS, PROBE_RETRY_MS, forEachLimit } from "./reconciler";
import { FakeStacks, FakeWriter, reconciler } from "./test-helpers";
import { TerminalError, WorkQueue } from "./workqueue";
import { FakeClock } from "../../test/helpers/fake-clock";
import { networkPath } from "../../test/helpers/network-path";

const settle = () => new Promise((r) => setImmediate(r));

const path = (
  name: string,
  ns = "team-a",
  extra: Partial<NetworkPathObject["metadata"]> = {},
): NetworkPathObject =>
  networkPath(name, {
    metadata: { resourceVersion: "1", ...extra },
    spec: { consumerNamespace: ns, instanceHost: "db" },
  });

describe("bridge seams: work queue", () => {
  it("runs a key once however often it is added, never twice at once, and again after a run when added during it", async () => {
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const q = new WorkQueue({
      concurrency: 2,
      clock: new FakeClock(),
      handler: async (key) => {
        runs.push(key);
        await new Promise<void>((r) => (release = r));
      },
    });
    q.start();
    q.add("a");
    q.add("a");
    await settle();
    assert.deepEqual(runs, ["a"]);
    q.add("a"); // during its run
    await settle();
    assert.deepEqual(runs, ["a"], "not twice at once");
    release();
    await settle();
    await settle();
    assert.deepEqual(runs, ["a", "a"], "runs again after");
    release();
    await settle();
  });

  it("runs nothing before start(), and a burst of adds in one turn is seen whole by the run it starts", async () => {
    const cache: string[] = [];
    const seen: string[][] = [];
    const q = new WorkQueue({
      concurrency: 1,
      clock: new FakeClock(),
      handler: (key) => {
        seen.push([key, ...cache]);
        return Promise.resolve();
      },
    });
    q.add("g");
    await settle();
    assert.deepEqual(seen, [], "not started");
    q.start();
    await settle();
    assert.deepEqual(seen, [["g"]]);
    // An informer's relist: each object lands in the cache, then queues its group, in one turn.
    for (const obj of ["a", "b", "c"]) {
      cache.push(obj);
      q.add("g");
    }
    await settle();
    await settle();
    assert.deepEqual(seen, [["g"], ["g", "a", "b", "c"]], "one run, after the whole burst");
  });

  it("keeps to the concurrency limit", async () => {
    const active = new Set<string>();
    let most = 0;
    const done: (() => void)[] = [];
    const q = new WorkQueue({
      concurrency: 2,
      clock: new FakeClock(),
      handler: async (key) => {
        active.add(key);
        most = Math.max(most, active.size);
        await new Promise<void>((r) => done.push(r));
        active.delete(key);
      },
    });
    q.start();
    for (const k of ["a", "b", "c", "d"]) q.add(k);
    await settle();
    assert.equal(active.size, 2);
    assert.equal(q.depth, 2);
    while (done.length > 0) {
      done.shift()!();
      await settle();
      await settle();
    }
    assert.equal(most, 2);
    assert.equal(q.depth, 0);
  });

  it("retries a failing key with growing per-key backoff, resets it on success, and does not retry a terminal error", async () => {
    const clock = new FakeClock();
    let fail = true;
    const errors: (number | undefined)[] = [];
    const q = new WorkQueue({
      concurrency: 1,
      clock,
      backoff: (attempt) => 1000 * 2 ** (attempt - 1),
      onError: (_k, _e, _a, retryInMs) => errors.push(retryInMs),
      handler: (key) => {
        if (key === "t") return Promise.reject(new TerminalError("cannot"));
        return fail ? Promise.reject(new Error("boom")) : Promise.resolve();
      },
    });
    q.start();
    q.add("k");
    await settle();
    assert.deepEqual(clock.pending(), [1000]);
    await clock.advance(1000);
    assert.deepEqual(clock.pending(), [2000]);
    assert.equal(q.attempts("k"), 2);
    fail = false;
    await clock.advance(2000);
    assert.equal(q.attempts("k"), 0, "a success resets the backoff");
    assert.deepEqual(clock.pending(), []);
    q.add("t");
    await settle();
    assert.deepEqual(clock.pending(), [], "a terminal error is not requeued");
    assert.deepEqual(errors, [1000, 2000, undefined]);
  });

  it("requeues after what the handler asks, keeps the earliest due time, and an event in between runs the key at once", async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const q = new WorkQueue({
      concurrency: 1,
      clock,
      handler: (key) => {
        runs.push(key);
        return Promise.resolve({ requeueAfter: 5000 });
      },
    });
    q.start();
    q.add("a");
    await settle();
    q.addAfter("a", 9000);
    assert.deepEqual(clock.pending(), [5000], "the earlier of 5 s and 9 s");
    q.add("a");
    await settle();
    assert.equal(runs.length, 2, "an event runs it at once");
    assert.deepEqual(clock.pending(), [5000], "the timer it replaced is gone; the new run set its own");
  });

  it("shutDown drops queued and delayed keys and waits for the running ones", async () => {
    const clock = new FakeClock();
    let release: () => void = () => undefined;
    const runs: string[] = [];
    const q = new WorkQueue({
      concurrency: 1,
      clock,
      handler: async (key) => {
        runs.push(key);
        await new Promise<void>((r) => (release = r));
      },
    });
    q.start();
    q.add("a");
    q.add("b");
    q.addAfter("c", 100);
    await settle();
    const stopped = q.shutDown(10_000);
    release();
    assert.equal(await stopped, true);
    q.add("d");
    await clock.advance(1000);
    assert.deepEqual(runs, ["a"]);
  });
});

class FakeInformer implements PathInformer {
  objects = new Map<string, NetworkPathObject>();
  private handlers: Record<string, ((x: never) => void)[]> = {};
  starts = 0;
  failStart = false;
  on(verb: string, cb: (x: never) => void): void {
    (this.handlers[verb] ??= []).push(cb);
  }
  emit(verb: "add" | "update" | "delete" | "error", obj: unknown): void {
    if (verb === "delete") this.objects.delete((obj as NetworkPathObject).metadata.name);
    else if (verb !== "error")
      this.objects.set((obj as NetworkPathObject).metadata.name, obj as NetworkPathObject);
    for (const cb of this.handlers[verb] ?? []) cb(obj as never);
  }
  start(): Promise<void> {
    this.starts++;
    if (this.failStart) this.emit("error", new Error("connection refused"));
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  list(): NetworkPathObject[] {
    return [...this.objects.values()];
  }
}

describe("bridge seams: list/watch cache", () => {
  it("queues a path's group on add, spec change, deletion and a lost finalizer; not on status or its own finalizer writes; NOOP never", async () => {
    const informer = new FakeInformer();
    const queued: string[] = [];
    const cache = new PathCache(informer, {
      enqueue: (k) => queued.push(k),
      log: () => undefined,
      clock: new FakeClock(),
    });
    await cache.start();
    assert.ok(cache.healthy());
    const p = path("a");
    informer.emit("add", p);
    assert.deepEqual(queued, ["team-a/proxy"]);
    const held = { ...p, metadata: { ...p.metadata, finalizers: [BRIDGE_FINALIZER], resourceVersion: "2" } };
    informer.emit("update", held);
    informer.emit("update", { ...held, status: { hostForConsumer: "h", port: 1 } });
    assert.equal(queued.length, 1, "its own finalizer and status writes do not queue it");
    informer.emit("update", { ...held, metadata: { ...held.metadata, generation: 2 } });
    informer.emit("update", { ...held, metadata: { ...held.metadata, generation: 2, finalizers: [] } });
    informer.emit("delete", held);
    assert.equal(queued.length, 4);
    informer.emit("add", { ...path("n", "team-b"), spec: { ...path("n").spec, implementation: "noop" } });
    assert.equal(queued.length, 4, "NOOP markers are not the bridge's");
    informer.emit("add", path("b", "team-b"));
    assert.deepEqual(cache.groups(), ["team-b/proxy"]);
    assert.deepEqual(
      cache.group("team-b/proxy").map((x) => x.metadata.name),
      ["b"],
    );
    assert.equal(cache.firstSeen("b"), 0);
  });

  it("restarts the informer with backoff after a failed list or watch, and is unhealthy until it worked", async () => {
    const informer = new FakeInformer();
    const clock = new FakeClock();
    const cache = new PathCache(informer, { enqueue: () => undefined, log: () => undefined, clock });
    informer.failStart = true;
    await cache.start();
    assert.equal(cache.healthy(), false);
    assert.equal(clock.pending().length, 1);
    assert.ok(clock.pending()[0]! <= 500);
    informer.failStart = false;
    await clock.advance(500);
    assert.equal(informer.starts, 2);
    assert.equal(cache.healthy(), true);
    informer.emit("error", new Error("watch closed"));
    assert.equal(cache.healthy(), false);
    await cache.stop();
    await clock.advance(60_000);
    assert.equal(informer.starts, 2, "a stopped cache is not restarted");
  });
});

describe("bridge seams: reconciler", () => {
  it("finalizes new paths, runs the group's stack once, writes each changed status, nudges its composite, releases deleted paths", async () => {
    const stacks = new FakeStacks();
    const writer = new FakeWriter();
    const done = {
      ...path("b"),
      metadata: { ...path("b").metadata, finalizers: [BRIDGE_FINALIZER] },
    };
    const gone = {
      ...path("c"),
      metadata: { ...path("c").metadata, deletionTimestamp: "T", finalizers: [BRIDGE_FINALIZER] },
    };
    stacks.outputs = {
      endpoints: {
        a: { hostForConsumer: "127.0.0.1", port: 42001 },
        b: { hostForConsumer: "127.0.0.1", port: 42002 },
      },
      problems: {},
    };
    const { r, events } = reconciler([path("a"), done, gone], stacks, writer);
    assert.deepEqual(await r.reconcile("team-a/proxy"), {});
    assert.deepEqual(stacks.ups, [["a", "b"]]);
    assert.deepEqual(writer.calls, ["finalize a", "status a", "status b", "nudge a", "nudge b", "release c"]);
    assert.equal(writer.statuses.get("a")?.port, 42001);
    assert.deepEqual(events, ["Normal PathReady", "Normal PathReady", "Normal Released"]);
  });

  it("writes nothing and nudges nothing when every status is already what the run says", async () => {
    const stacks = new FakeStacks();
    stacks.outputs = { endpoints: { a: { hostForConsumer: "127.0.0.1", port: 42001 } }, problems: {} };
    const first = new FakeWriter();
    await reconciler([path("a")], stacks, first).r.reconcile("k");
    const current = {
      ...path("a"),
      metadata: { ...path("a").metadata, finalizers: [BRIDGE_FINALIZER] },
      status: first.statuses.get("a"),
    };
    const writer = new FakeWriter();
    await reconciler([current], stacks, writer).r.reconcile("k");
    assert.deepEqual(writer.calls, []);
    assert.equal(stacks.ups.length, 2);
  });

  it("a path the program left out gets its problem; the others stay Ready", async () => {
    const stacks = new FakeStacks();
    const writer = new FakeWriter();
    stacks.outputs = {
      endpoints: { a: { hostForConsumer: "h", port: 1 } },
      problems: { b: { reason: "PortRangeExhausted", message: "no port left" } },
    };
    await reconciler([path("a"), path("b")], stacks, writer).r.reconcile("k");
    assert.equal(writer.statuses.get("a")?.conditions?.find((c) => c.type === "Ready")?.status, "True");
    assert.equal(
      writer.statuses.get("b")?.conditions?.find((c) => c.type === "Ready")?.reason,
      "PortRangeExhausted",
    );
  });

  it("a failed run marks every live path Synced=False with the error and throws it for the queue's backoff", async () => {
    const stacks = new FakeStacks();
    const writer = new FakeWriter();
    stacks.outputs = new Error("line 1\nengine exploded");
    const { r, events } = reconciler([path("a")], stacks, writer);
    await assert.rejects(r.reconcile("k"), /engine exploded/);
    assert.equal(writer.statuses.get("a")?.conditions?.find((c) => c.type === "Synced")?.status, "False");
    assert.deepEqual(events, ["Warning ReconcileError"]);
  });

  it("node ports refused as already allocated are held out and the group is built again at once, with a reason of its own; the same refusal again goes to backoff", async () => {
    const stacks = new FakeStacks();
    const writer = new FakeWriter();
    // What the engine reports when the API server refuses the proxy Service's node port.
    stacks.outputs = new Error(
      'kubernetes:core/v1:Service "np-k-proxy" (create): Service "np-k-proxy" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is already allocated',
    );
    const { r, events } = reconciler([path("a")], stacks, writer);
    assert.deepEqual(await r.reconcile("k"), { requeueAfter: NODE_PORT_RETRY_MS });
    assert.deepEqual([...stacks.heldOut], [31000]);
    const synced = writer.statuses.get("a")?.conditions?.find((c) => c.type === "Synced");
    assert.equal(synced?.reason, "NodePortAllocated");
    assert.match(synced?.message ?? "", /refused node port 31000 of group k as already allocated/);
    assert.deepEqual(events, ["Warning NodePortAllocated"]);
    // Holding it out did not help (the same port again): an ordinary failure, with backoff.
    await assert.rejects(r.reconcile("k"), /provided port is already allocated/);
  });

  it("a run cancelled because the bridge stops is no failure", async () => {
    const stacks = new FakeStacks();
    stacks.outputs = new Error("cancelled");
    const writer = new FakeWriter();
    assert.deepEqual(await reconciler([path("a")], stacks, writer, true).r.reconcile("k"), {});
    assert.ok(!writer.calls.some((c) => c.startsWith("status")));
  });

  it("an unknown implementation is a terminal error on each path; a routed probe that failed asks to run again later", async () => {
    const writer = new FakeWriter();
    const odd = { ...path("a"), spec: { ...path("a").spec, implementation: "carrier-pigeon" } };
    await assert.rejects(reconciler([odd], new FakeStacks(), writer).r.reconcile("k"), TerminalError);
    assert.match(writer.statuses.get("a")?.conditions?.[1]?.message ?? "", /carrier-pigeon/);
    const stacks = new FakeStacks();
    stacks.outputs = {
      endpoints: {
        a: {
          hostForConsumer: "db",
          port: 5432,
          probe: { ready: false, reason: "Unreachable", message: "refused" },
        },
      },
      problems: {},
    };
    const routed = { ...path("a"), spec: { ...path("a").spec, implementation: "wireguard" } };
    assert.deepEqual(await reconciler([routed], stacks, new FakeWriter()).r.reconcile("k"), {
      requeueAfter: PROBE_RETRY_MS,
    });
  });

  it("a group with no paths left has its stack destroyed", async () => {
    const stacks = new FakeStacks();
    await reconciler([], stacks, new FakeWriter()).r.reconcile("team-a/proxy");
    assert.deepEqual(stacks.destroyed, ["team-a/proxy"]);
  });
});

describe("bridge seams: pure helpers of the stack runner and writer", () => {
  it("the reconciler's writes run at most N at once, all of them even when one fails, and the failure is reported", async () => {
    let active = 0;
    let most = 0;
    const done: number[] = [];
    const write = async (i: number) => {
      active++;
      most = Math.max(most, active);
      await settle();
      active--;
      if (i === 3) throw new Error("conflict on 3");
      done.push(i);
    };
    await assert.rejects(
      forEachLimit(
        Array.from({ length: 25 }, (_, i) => i),
        10,
        write,
      ),
      /conflict on 3/,
    );
    assert.equal(most, 10);
    assert.equal(done.length, 24, "the others were written");
  });

  it("reads pending operations from a checkpoint file; undefined for a file that is no checkpoint", () => {
    const cp = (ops?: unknown[]) =>
      JSON.stringify({
        version: 3,
        checkpoint: { latest: { resources: [], ...(ops ? { pending_operations: ops } : {}) } },
      });
    assert.equal(pendingOperationCount(cp()), 0);
    assert.equal(pendingOperationCount(cp([{}, {}])), 2);
    assert.equal(pendingOperationCount(JSON.stringify({ version: 3, checkpoint: { stack: "s" } })), 0);
    assert.equal(pendingOperationCount(""), undefined);
    assert.equal(pendingOperationCount("{}"), undefined);
  });

  it("nudges the composite that controls a path, and nothing for a path without one", () => {
    const owned = path("a", "team-a", {
      ownerReferences: [
        { apiVersion: "other.io/v1", kind: "Thing", name: "t" },
        { apiVersion: "klutch.anynines.com/v1", kind: "XTCPConnection", name: "orders-x1", controller: true },
      ],
    });
    assert.deepEqual(compositeNudge(owned, "T"), {
      group: "klutch.anynines.com",
      version: "v1",
      name: "orders-x1",
      annotations: { [PATH_STATUS_ANNOTATION]: "T" },
    });
    assert.equal(compositeNudge(path("b"), "T"), undefined);
  });
});
