import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  connectionProblems,
  consumerEndpoints,
  proxyHost,
  renderHaproxyConfig,
  sectionName,
} from "./haproxy-config";
import { planPorts } from "./port-planner";
import { ProxyConnection, SNI_LISTENER, listenerKeys } from "./types";
import { goldenChecker } from "../../../test/helpers/golden";

const HAPROXY = "/usr/sbin/haproxy";

const golden = goldenChecker(path.join(__dirname, "golden"));

/** The real HAProxy's verdict on a config: exit status and everything it printed. */
function haproxyCheck(config: string): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "haproxy-check-"));
  try {
    const file = path.join(dir, "haproxy.cfg");
    fs.writeFileSync(file, config);
    const r = spawnSync(HAPROXY, ["-c", "-f", file], { encoding: "utf8", timeout: 10000 });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function assertHaproxyAccepts(config: string): void {
  const { status, output } = haproxyCheck(config);
  assert.equal(status, 0, `haproxy -c rejected the config:\n${output}`);
  assert.doesNotMatch(output, /\[(WARNING|ALERT)\]/, `haproxy -c complained:\n${output}`);
}

const PG = [{ InstanceType: "PostgreSQL" }];
const sni = (serverName: string) => [{ ConnectionType: "tlsSNI", serverName }];

const CASES: Record<string, ProxyConnection[]> = {
  "one-connection.cfg": [{ id: "team-a/orders-db", instanceHost: "10.50.0.10", port: 5432 }],
  "several-connections.cfg": [
    { id: "team-b/cache", instanceHost: "10.50.0.30", port: 6379 },
    { id: "team-a/orders-db", instanceHost: "10.50.0.10", port: 5432 },
    {
      id: "shared-queue",
      instanceHost: "localhost",
      port: 5672,
      enhancements: [{ InstanceType: "RabbitMQ" }],
    },
    { id: "team-a/v6-db", instanceHost: "fd00:50::12", port: 5432 },
  ],
  "postgresql.cfg": [
    { id: "team-a/orders-db", instanceHost: "10.50.0.10", port: 5432, enhancements: PG },
    { id: "team-a/metrics", instanceHost: "10.50.0.10", port: 9187 },
  ],
  "sni-routing.cfg": [
    {
      id: "team-a/orders-db",
      instanceHost: "10.50.0.10",
      port: 5432,
      enhancements: [...PG, ...sni("orders.db.example.com")],
    },
    {
      id: "team-b/billing-db",
      instanceHost: "10.50.0.20",
      port: 5432,
      enhancements: sni("Billing.DB.example.com"),
    },
    { id: "team-b/cache", instanceHost: "10.50.0.30", port: 6379 },
  ],
};

function render(connections: ProxyConnection[]): string {
  const plan = planPorts({ range: { from: 30000, to: 30999 }, ids: listenerKeys(connections) });
  return renderHaproxyConfig(connections, plan.assignments);
}

describe("HAProxy config (pure, checked by the real haproxy)", function () {
  this.timeout(30000);

  for (const [file, connections] of Object.entries(CASES)) {
    it(`renders ${file} (golden) and haproxy 2.6 accepts it without warnings`, () => {
      const config = render(connections);
      golden(file, config);
      assertHaproxyAccepts(config);
    });
  }

  it("the validation is real: haproxy -c rejects a broken config", () => {
    const broken = render(CASES["one-connection.cfg"] as ProxyConnection[]).replace("mode tcp", "mode tcpp");
    assert.notEqual(haproxyCheck(broken).status, 0);
  });

  it("is deterministic: input order does not change a byte", () => {
    const list = CASES["sni-routing.cfg"] as ProxyConnection[];
    assert.equal(render([...list].reverse()), render(list));
    assert.equal(render(list), render(list));
  });

  it("has explicit timeouts, TCP mode and loopback-only stats", () => {
    const config = render(CASES["one-connection.cfg"] as ProxyConnection[]);
    for (const line of [
      "    mode tcp",
      "    timeout connect 3s",
      "    timeout client 1h",
      "    timeout server 1h",
      "    timeout tunnel 1h",
      "    timeout client-fin 30s",
      "    timeout server-fin 30s",
      "    bind 127.0.0.1:8404",
      "    monitor-uri /healthz",
    ]) {
      assert.ok(config.split("\n").includes(line), `missing: ${line}`);
    }
    assert.match(
      config,
      /server instance 10\.50\.0\.10:5432 check inter 2s fastinter 500ms downinter 1s fall 3 rise 2\n/,
    );
    assert.doesNotMatch(config, /nbthread/, "left to HAProxy unless asked");
    assertHaproxyAccepts(
      renderHaproxyConfig(
        CASES["one-connection.cfg"] as ProxyConnection[],
        { "team-a/orders-db": 30000 },
        { nbthread: 2 },
      ),
    );
  });

  it("polls without sleeping only when asked, and haproxy accepts it", () => {
    const one = CASES["one-connection.cfg"] as ProxyConnection[];
    assert.doesNotMatch(render(one), /busy-polling/);
    const config = renderHaproxyConfig(
      one,
      { "team-a/orders-db": 30000 },
      { nbthread: 1, busyPolling: true },
    );
    const global = config.slice(config.indexOf("global\n"), config.indexOf("\ndefaults"));
    assert.deepEqual(global.split("\n").slice(1, 4), [
      "    maxconn 4096",
      "    nbthread 1",
      "    busy-polling",
    ]);
    assertHaproxyAccepts(config);
  });

  it("logs each connection unless told not to, and haproxy accepts both", () => {
    const one = CASES["one-connection.cfg"] as ProxyConnection[];
    const frontend = (config: string) =>
      config.slice(config.indexOf("frontend ft_team-a_orders-db"), config.indexOf("\nbackend "));
    assert.match(frontend(render(one)), /\n {4}option tcplog\n/);
    const quiet = renderHaproxyConfig(one, { "team-a/orders-db": 30000 }, { logConnections: false });
    assert.doesNotMatch(quiet, /tcplog/);
    assert.match(frontend(quiet), /\n {4}no log\n/);
    // The stats and health frontends stay unlogged either way.
    assert.equal(quiet.match(/ {4}no log\n/g)?.length, 3);
    assertHaproxyAccepts(quiet);
  });

  it("uses the pgsql-aware check only for PostgreSQL instances", () => {
    const config = renderHaproxyConfig(
      CASES["postgresql.cfg"] as ProxyConnection[],
      {
        "team-a/orders-db": 30000,
        "team-a/metrics": 30001,
      },
      { pgsqlCheckUser: "monitor" },
    );
    const backends = config.split("\n\n").filter((s) => s.startsWith("backend "));
    assert.equal(backends.length, 2);
    assert.match(backends.find((b) => b.includes("orders-db")) ?? "", /option pgsql-check user monitor/);
    assert.doesNotMatch(backends.find((b) => b.includes("metrics")) ?? "", /pgsql-check/);
    assert.throws(
      () => renderHaproxyConfig([], {}, { pgsqlCheckUser: "x; drop" }),
      /pgsqlCheckUser "x; drop" must be a plain PostgreSQL role name/,
    );
  });

  it("routes SNI connections on one shared port, by lower-cased server name", () => {
    const list = CASES["sni-routing.cfg"] as ProxyConnection[];
    assert.deepEqual(listenerKeys(list), [SNI_LISTENER, "team-b/cache"]);
    const config = render(list);
    const frontends = config.match(/^frontend ft_.*$/gm);
    assert.deepEqual(frontends, ["frontend ft_team-b_cache", "frontend ft_tls_sni"]);
    assert.match(
      config,
      /use_backend bk_team-b_billing-db if \{ req_ssl_sni -i billing\.db\.example\.com \}\n {4}use_backend bk_team-a_orders-db if/,
    );
    const endpoints = consumerEndpoints(
      list,
      { [SNI_LISTENER]: 30000, "team-b/cache": 30001 },
      "proxy.example.com",
    );
    assert.deepEqual(endpoints, {
      "team-a/orders-db": { hostForConsumer: "proxy.example.com", port: 30000 },
      "team-b/billing-db": { hostForConsumer: "proxy.example.com", port: 30000 },
      "team-b/cache": { hostForConsumer: "proxy.example.com", port: 30001 },
    });
  });

  it("names sections one-to-one from ids", () => {
    assert.equal(sectionName("bk", "ns/a.b"), "bk_ns_a.b");
    assert.equal(sectionName("ft", "a.b"), "ft_a.b");
    assert.equal(sectionName("ft", SNI_LISTENER), "ft_tls_sni");
  });

  it("rejects bad connections with errors naming the field and the fix", () => {
    const problems = connectionProblems([
      { id: "ns/a", instanceHost: "", port: 5432 },
      { id: "ns/a", instanceHost: "10.0.0.1", port: 70000 },
      { id: "Bad Id", instanceHost: "not a host", port: 1 },
      { id: "ns/s1", instanceHost: "10.0.0.1", port: 1, enhancements: sni("x.example.com") },
      { id: "ns/s2", instanceHost: "10.0.0.1", port: 1, enhancements: sni("X.example.com") },
      { id: "ns/s3", instanceHost: "10.0.0.1", port: 1, enhancements: [{ ConnectionType: "tlsSNI" }] },
    ]);
    assert.deepEqual(problems, [
      "connections[0].instanceHost is empty; set it to the instance's DNS name or IP address",
      'connections[1].id "ns/a" duplicates connections[0]; ids must be unique',
      "connections[1].port must be a whole number from 1 to 65535 (got 70000)",
      `connections[2].id "Bad Id" must be namespace/name (or a cluster-scoped name): lowercase letters, digits, '-' and '.'`,
      'connections[2].instanceHost "not a host" is neither a DNS name nor an IP address',
      'connections[4]: tlsSNI serverName "x.example.com" is already used by connections[3]; names must be unique',
      "connections[5].enhancements: a tlsSNI entry needs serverName, a DNS name such as pg-1.example.com",
    ]);
    assert.throws(
      () => renderHaproxyConfig([{ id: "ns/a", instanceHost: "", port: 5432 }], { "ns/a": 30000 }),
      /invalid proxy connections:\n {2}- connections\[0\]\.instanceHost is empty/,
    );
    const one = CASES["one-connection.cfg"] as ProxyConnection[];
    assert.throws(() => renderHaproxyConfig(one, {}), /no proxy port assigned to "team-a\/orders-db"/);
    assert.throws(
      () => renderHaproxyConfig(one, { "team-a/orders-db": 8404 }),
      /port 8404 of "team-a\/orders-db" is the proxy's own stats\/health port/,
    );
    assert.throws(
      () => renderHaproxyConfig(one, { "team-a/orders-db": 30000 }, { nbthread: 0 }),
      /nbthread must be a whole number from 1 to 64 \(got 0\)/,
    );
    assert.throws(
      () => renderHaproxyConfig(one, { "team-a/orders-db": 30000 }, { timeouts: { tunnel: "forever" } }),
      /timeouts\.tunnel "forever" must be an HAProxy duration/,
    );
  });

  it("derives hostForConsumer from the most specific address of the Service", () => {
    const base = { serviceName: "klutch-proxy", namespace: "klutch-proxy" };
    assert.equal(proxyHost(base), "klutch-proxy.klutch-proxy.svc.cluster.local");
    assert.equal(proxyHost({ ...base, clusterDomain: "c.local" }), "klutch-proxy.klutch-proxy.svc.c.local");
    assert.equal(proxyHost({ ...base, nodeHost: "192.0.2.7" }), "192.0.2.7");
    assert.equal(proxyHost({ ...base, loadBalancerHost: "203.0.113.9", nodeHost: "x" }), "203.0.113.9");
    assert.equal(
      proxyHost({ ...base, externalHost: "db.example.com", loadBalancerHost: "203.0.113.9" }),
      "db.example.com",
    );
    assert.throws(
      () => consumerEndpoints([{ id: "a", instanceHost: "h", port: 1 }], {}, "h"),
      /no proxy port assigned to connection "a"/,
    );
  });
});
