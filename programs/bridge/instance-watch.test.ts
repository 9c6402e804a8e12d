import { strict as assert } from "node:assert";
import { FakeClock } from "../../test/helpers/fake-clock";
import { networkPath } from "../../test/helpers/network-path";
import { InstanceWatch, instanceServiceKey, type SliceInformer, type WatchedSlice } from "./instance-watch";
import { PollingWatch } from "./node-watch";

/** An informer whose events and failures the test sends. */
class FakeSliceInformer implements SliceInformer {
  readonly handlers = new Map<string, ((x: never) => void)[]>();
  starts = 0;
  refuse: Error | undefined;
  on(verb: string, cb: (x: never) => void): void {
    this.handlers.set(verb, [...(this.handlers.get(verb) ?? []), cb]);
  }
  start(): Promise<void> {
    this.starts++;
    return this.refuse ? Promise.reject(this.refuse) : Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  emit(verb: "add" | "update" | "delete" | "error", x: WatchedSlice | Error): void {
    for (const cb of this.handlers.get(verb) ?? []) cb(x as never);
  }
}

const slice = (namespace: string, service: string): WatchedSlice => ({
  metadata: { namespace, labels: { "kubernetes.io/service-name": service } },
});

describe("InstanceWatch: the paths' health read as soon as an instance's endpoints change", () => {
  function setup() {
    const informer = new FakeSliceInformer();
    const clock = new FakeClock();
    const changed: string[] = [];
    const logs: string[] = [];
    const watch = new InstanceWatch({
      informer,
      services: () => new Set(["pg/orders"]),
      onChange: (s, verb) => changed.push(`${verb} ${s}`),
      log: (level, msg) => logs.push(`${level} ${msg}`),
      clock,
    });
    return { informer, clock, changed, logs, watch };
  }

  it("names the Service of a slice added, changed or deleted when some path's instance is it; other Services' slices say nothing", () => {
    const { informer, changed } = setup();
    informer.emit("update", slice("pg", "orders"));
    informer.emit("delete", slice("pg", "orders"));
    informer.emit("add", slice("pg", "billing"));
    informer.emit("update", slice("other", "orders"));
    informer.emit("update", { metadata: { namespace: "pg" } });
    assert.deepEqual(changed, ["update pg/orders", "delete pg/orders"]);
  });

  it("a failed watch starts again after a backoff; a refused one (403) is said once and left off, the poll reading alone", async () => {
    const { informer, clock, logs, watch } = setup();
    await watch.start();
    informer.emit("error", new Error("connection reset"));
    assert.match(logs.at(-1)!, /^warn the instances' EndpointSlice watch failed; restarting/);
    await clock.advance(1_000);
    assert.equal(informer.starts, 2);
    informer.refuse = Object.assign(new Error("endpointslices.discovery.k8s.io is forbidden"), { code: 403 });
    informer.emit("error", new Error("connection reset"));
    await clock.advance(30_000);
    assert.equal(informer.starts, 3);
    assert.match(logs.at(-1)!, /^info the data-plane identity may not watch EndpointSlices/);
    assert.deepEqual(clock.pending(), [], "no restart after a refusal");
    await watch.stop();
  });

  it("reads the Service a path's instance host names, in any cluster domain; an address names none", () => {
    const at = (instanceHost: string) => instanceServiceKey(networkPath("p", { spec: { instanceHost } }));
    assert.equal(at("orders.pg.svc.cluster.local"), "pg/orders");
    assert.equal(at("Orders.PG.svc.corp.example"), "pg/orders");
    assert.equal(at("orders.pg.svc"), "pg/orders");
    assert.equal(at("10.0.0.7"), undefined);
    assert.equal(at("db.example.com"), undefined);
  });
});

describe("PollingWatch.kick: a round now, never two at once", () => {
  it("a kick reads at once and the next tick is a whole interval later; kicks during a round make one more round right after it", async () => {
    const clock = new FakeClock();
    let reads = 0;
    let release: () => void = () => undefined;
    let block = false;
    const watch = new PollingWatch<number>({
      wanted: () => true,
      read: () => {
        reads++;
        return block ? new Promise<number>((r) => (release = () => r(reads))) : Promise.resolve(reads);
      },
      onRead: () => undefined,
      intervalMs: 2_000,
      log: () => undefined,
      messages: { failing: "f", recovered: "r" },
      clock,
    });
    watch.start();
    await clock.advance(0);
    assert.equal(reads, 1);
    await clock.advance(500);
    watch.kick();
    await clock.advance(0);
    assert.equal(reads, 2);
    assert.deepEqual(clock.pending(), [2_000], "one timer, a whole interval from the kick's round");

    block = true;
    watch.kick();
    await clock.advance(0);
    assert.equal(reads, 3);
    watch.kick();
    watch.kick();
    assert.equal(reads, 3, "no second round while one runs");
    block = false;
    release();
    await clock.advance(0);
    await clock.advance(0);
    assert.equal(reads, 4, "the kicks during the round made exactly one more");
    assert.deepEqual(clock.pending(), [2_000]);
    watch.stop();
    watch.kick();
    await clock.advance(0);
    assert.equal(reads, 4, "a stopped watch reads nothing");
  });
});
