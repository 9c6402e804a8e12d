import { strict as assert } from "node:assert";
import { FakeClock } from "../../test/helpers/fake-clock";
import {
  ABSENT_RETRY_MS,
  DEBOUNCE_MS,
  InstanceNamesWatcher,
  REFRESH_MS,
  type ClaimSource,
  type WatchedClaim,
} from "./watcher";

const ZONE = "a9s-instances.svc.cluster.local";
const PG0 = `pg-0.${ZONE}`;
const PG1 = `pg-1.${ZONE}`;
const LB = "k8s-klutch-abc123.elb.eu-central-1.amazonaws.com";

const settle = () => new Promise((r) => setImmediate(r));
const apiError = (code: number, message: string) => Object.assign(new Error(message), { code });

/** A ServiceBinding claim as the konnector copies it into the app cluster. */
function binding(name: string, names: [string, string][], resourceVersion = "1"): WatchedClaim {
  return {
    metadata: { namespace: "team-a", name, creationTimestamp: "2026-03-01T10:00:00Z", resourceVersion },
    status: { managed: { instanceNames: names.map(([n, address]) => ({ name: n, address })) } },
  };
}

/** One resource's list and watch, answered as the test says. */
class FakeSource implements ClaimSource {
  readonly resource = "anynines.com/v1/servicebindings";
  listed: { items: WatchedClaim[]; resourceVersion: string } | Error = { items: [], resourceVersion: "10" };
  lists = 0;
  watchedFrom: string[] = [];
  stops = 0;
  send: (type: "add" | "update" | "delete" | "bookmark", c: WatchedClaim) => void = () => undefined;
  end: (err?: unknown) => void = () => undefined;
  list() {
    this.lists++;
    return this.listed instanceof Error ? Promise.reject(this.listed) : Promise.resolve(this.listed);
  }
  watch(version: string, send: FakeSource["send"], end: FakeSource["end"]) {
    this.watchedFrom.push(version);
    [this.send, this.end] = [send, end];
    return Promise.resolve({ stop: () => void this.stops++ });
  }
}

function setup(sources = [new FakeSource()]) {
  const clock = new FakeClock();
  const files: string[] = [];
  const logs: string[] = [];
  const dns = new Map<string, string[] | Error>();
  const failWrite = { next: false };
  const watcher = new InstanceNamesWatcher({
    sources,
    zones: [ZONE],
    resolve: (host) => {
      const a = dns.get(host) ?? Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
    write: (text) =>
      failWrite.next
        ? Promise.reject(new Error("EROFS: read-only file system"))
        : (files.push(text), Promise.resolve()),
    log: (level, msg, fields) => logs.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    clock,
  });
  const lines = () => (files.at(-1) ?? "").split("\n").filter((l) => l && !l.startsWith("#"));
  return { source: sources[0] as FakeSource, clock, files, logs, dns, failWrite, watcher, lines };
}

describe("instance names watcher: the hosts file from the claims", () => {
  it("writes the names of the first complete list after the debounce, then is ready", async () => {
    const { source, clock, files, logs, watcher, lines } = setup();
    source.listed = { items: [binding("app-db", [[PG0, "172.18.0.4"]])], resourceVersion: "10" };
    watcher.start();
    await settle();
    assert.equal(watcher.ready, false);
    assert.deepEqual(files, []);
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`172.18.0.4 ${PG0}`]);
    assert.equal(watcher.ready, true);
    assert.deepEqual(source.watchedFrom, ["10"]);
    assert.deepEqual(logs, ['info wrote the hosts file {"names":1,"claims":1}']);
  });

  it("follows the watch: a burst is one write, a change that changes no line writes nothing", async () => {
    const { source, clock, files, watcher, lines } = setup();
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    source.send("add", binding("app-db", [[PG0, "172.18.0.4"]], "11"));
    source.send("add", binding("orders-db", [[PG1, "172.18.0.5"]], "12"));
    source.send("update", binding("app-db", [[PG0, "172.18.0.9"]], "13"));
    await clock.advance(DEBOUNCE_MS);
    assert.equal(files.length, 2);
    assert.deepEqual(lines(), [`172.18.0.9 ${PG0}`, `172.18.0.5 ${PG1}`]);
    source.send("update", binding("app-db", [[PG0, "172.18.0.9"]], "14"));
    await clock.advance(DEBOUNCE_MS);
    assert.equal(files.length, 2);
    source.send("delete", binding("orders-db", [], "15"));
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`172.18.0.9 ${PG0}`]);
  });

  it("counts a resource not served yet (404) as no claims, is ready at once, and lists it again every 10 s", async () => {
    const { source, clock, logs, watcher, lines } = setup();
    source.listed = apiError(404, "HTTP-Code: 404 Message: Unknown API Status Code!");
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    assert.equal(watcher.ready, true);
    assert.deepEqual(lines(), []);
    await clock.advance(ABSENT_RETRY_MS);
    assert.equal(source.lists, 2);
    assert.equal(logs.filter((l) => l.includes("not served")).length, 1, "said once");
    source.listed = { items: [binding("app-db", [[PG0, "172.18.0.4"]])], resourceVersion: "3" };
    await clock.advance(ABSENT_RETRY_MS);
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`172.18.0.4 ${PG0}`]);
    assert.ok(logs.some((l) => l.includes("served now")));
  });

  it("writes nothing and is not ready until every resource is listed; a failed list is retried", async () => {
    const other = new FakeSource();
    const { source, clock, files, logs, watcher } = setup([new FakeSource(), other]);
    source.listed = { items: [binding("app-db", [[PG0, "172.18.0.4"]])], resourceVersion: "10" };
    other.listed = apiError(500, "HTTP-Code: 500 Message: etcdserver: request timed out");
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    assert.equal(watcher.ready, false);
    assert.deepEqual(files, []);
    assert.match(logs.join("\n"), /warn listing the claims failed; listing again .*etcdserver/);
    other.listed = { items: [], resourceVersion: "4" };
    await clock.advance(10_000);
    await clock.advance(DEBOUNCE_MS);
    assert.equal(watcher.ready, true);
    assert.equal(files.length, 1);
  });

  it("watches again from the last version after an ordinary end, relists at once on 410 and after a backoff on an error", async () => {
    const { source, clock, watcher } = setup();
    watcher.start();
    await settle();
    await clock.advance(2000);
    source.send("bookmark", { metadata: { resourceVersion: "20" } });
    source.end();
    await clock.advance(0);
    assert.deepEqual(source.watchedFrom, ["10", "20"]);
    source.end(apiError(410, "too old resource version: 20 (30)"));
    await clock.advance(0);
    assert.equal(source.lists, 2);
    source.end(apiError(500, "stream reset"));
    source.end(apiError(500, "the same watch's second word is ignored"));
    await clock.advance(0);
    assert.equal(source.lists, 2);
    await clock.advance(10_000);
    assert.equal(source.lists, 3);
  });
});

describe("instance names watcher: host-name addresses, problems, writes", () => {
  it("resolves a host-name address, asks again every 30 s, keeps the last answer when it fails", async () => {
    const { source, clock, logs, dns, watcher, lines, files } = setup();
    dns.set(LB, ["3.120.1.2", "18.1.1.1", "18.1.1.1"]);
    source.listed = { items: [binding("app-db", [[PG0, LB]])], resourceVersion: "10" };
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`3.120.1.2 ${PG0}`, `18.1.1.1 ${PG0}`]);
    dns.set(LB, ["3.120.1.3"]);
    await clock.advance(REFRESH_MS);
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`3.120.1.3 ${PG0}`]);
    dns.delete(LB);
    await clock.advance(REFRESH_MS);
    await clock.advance(DEBOUNCE_MS);
    await clock.advance(REFRESH_MS);
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), [`3.120.1.3 ${PG0}`]);
    assert.equal(files.length, 2);
    const said = logs.filter((l) => l.includes("does not resolve"));
    assert.equal(said.length, 1, "said once while it lasts");
    assert.match(
      said[0] as string,
      /claim team-a\/app-db: pg-0.*: address \\"k8s-klutch.*\\" does not resolve \(ENOTFOUND\); its last answer \(3.120.1.3\) is kept/,
    );
  });

  it("leaves out a name whose host never resolved, and says each refused entry once until it goes away", async () => {
    const { source, clock, logs, watcher, lines } = setup();
    source.listed = {
      items: [
        binding("app-db", [
          [PG0, LB],
          ["kubernetes.default.svc", "10.6.6.6"],
        ]),
      ],
      resourceVersion: "10",
    };
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    assert.deepEqual(lines(), []);
    source.send(
      "update",
      binding(
        "app-db",
        [
          [PG0, LB],
          ["kubernetes.default.svc", "10.6.6.6"],
        ],
        "11",
      ),
    );
    await clock.advance(DEBOUNCE_MS);
    const problems = () => logs.filter((l) => l.startsWith("warn instance-name problem"));
    assert.equal(problems().length, 2);
    assert.match(problems()[0] as string, /kubernetes.default.svc.*outside the zones/);
    assert.match(
      problems()[1] as string,
      /pg-0.*does not resolve \(ENOTFOUND\); the name is left out until it does/,
    );
    source.send("update", binding("app-db", [], "12"));
    await clock.advance(DEBOUNCE_MS);
    source.send("update", binding("app-db", [["kubernetes.default.svc", "10.6.6.6"]], "13"));
    await clock.advance(DEBOUNCE_MS);
    assert.equal(problems().length, 3, "back again: said again");
  });

  it("retries a failed write and is ready only once one worked; stop() leaves nothing running", async () => {
    const { source, clock, logs, failWrite, watcher, files } = setup();
    failWrite.next = true;
    watcher.start();
    await settle();
    await clock.advance(DEBOUNCE_MS);
    assert.equal(watcher.ready, false);
    assert.match(logs.join("\n"), /error writing the hosts file failed; trying again .*EROFS/);
    failWrite.next = false;
    await clock.advance(1000);
    await clock.advance(DEBOUNCE_MS);
    assert.equal(watcher.ready, true);
    assert.equal(files.length, 1);
    watcher.stop();
    assert.equal(source.stops, 1);
    assert.deepEqual(clock.pending(), []);
  });
});
