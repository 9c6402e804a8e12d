import {
  ConsumerEndpoint,
  ProxyConnection,
  SNI_LISTENER,
  compareStrings,
  isPostgres,
  listenerKey,
  sniServerName,
} from "./types";

/**
 * The HAProxy configuration of the default network path, rendered without Pulumi.
 *
 * Layout: TCP mode throughout; one frontend per connection on its own port, and one
 * shared frontend for every connection whose clients speak TLS with SNI (routed by the
 * server name in the ClientHello). Each connection has its own backend with one health-
 * checked server, so a dead instance is marked DOWN and clients get an immediate close
 * instead of a hang. A stats page (which names every backend) listens on loopback only; a
 * bare health endpoint listens on the pod address because the kubelet probes that address.
 *
 * Every list is sorted and nothing time- or machine-dependent is written, so equal input
 * gives byte-equal output: the config checksum then changes only when the config does.
 */

export interface HaproxyTimeouts {
  /** TCP connect to the instance. Also bounds the pause before the single retry. */
  connect: string;
  /** Client inactivity before the server side is connected. */
  client: string;
  /** Server inactivity before the tunnel is established. */
  server: string;
  /** Inactivity of an established client↔instance session (idle pooled DB connections live here). */
  tunnel: string;
  /** Half-closed sessions: how long to wait for the other side's FIN. */
  clientFin: string;
  serverFin: string;
  /** One health check. */
  check: string;
  /** How long the SNI frontend waits for a TLS ClientHello. */
  inspectDelay: string;
}

export interface HealthCheck {
  /** Interval between checks of a server that is up. */
  inter: string;
  /**
   * Interval while a server is going up or down (HAProxy's `fastinter`): after the first failed
   * check the next ones come this soon, so a lost instance is called down within about
   * fall x fastinter of it, while a server that keeps passing is checked only every `inter`.
   */
  fastinter?: string;
  /** Interval between checks of a server that is down (HAProxy's `downinter`). */
  downinter?: string;
  /** Consecutive failures that mark the instance DOWN. */
  fall: number;
  /** Consecutive successes that mark it UP again. */
  rise: number;
}

export interface HaproxyOptions {
  /** Address the connection frontends and the health endpoint bind to; default all IPv4 addresses. */
  bindAddress?: string;
  /** Loopback port of the stats page (`/stats`, CSV at `/stats;csv`). */
  statsPort?: number;
  /** Port of the health endpoint (`/healthz`) the kubelet probes. */
  healthPort?: number;
  /**
   * Role named in PostgreSQL health checks. The check stops at the server's first
   * authentication message, so no password is needed and, with password auth, nothing is
   * logged; with `trust` auth and a role that does not exist PostgreSQL logs a FATAL per check.
   */
  pgsqlCheckUser?: string;
  maxconn?: number;
  /**
   * Worker threads. HAProxy 2.6 otherwise starts one per CPU it may run on, which in a pod
   * is usually every CPU of the node, whatever the pod's CPU limit.
   */
  nbthread?: number;
  /**
   * Poll without sleeping (HAProxy's `busy-polling`). On a VM an idle CPU takes tens of µs
   * to wake, and every proxied round trip pays that twice; polling removes it, at the price
   * of one fully busy CPU per thread. Only for proxies with CPUs of their own (see the
   * TcpProxy's `dedicatedCpus`), never on shared CPUs.
   */
  busyPolling?: boolean;
  /**
   * A log line per connection (`option tcplog`, to stdout and so to the container log).
   * Default on: who connected to which instance, and how the session ended, is what an
   * operator reads first. Off is for proxies whose clients reconnect so often that the log
   * volume matters; it buys no throughput on held connections (docs/network-paths.md, the
   * data path's cost).
   */
  logConnections?: boolean;
  timeouts?: Partial<HaproxyTimeouts>;
  check?: Partial<HealthCheck>;
}

export const DEFAULT_STATS_PORT = 8404;
export const DEFAULT_HEALTH_PORT = 8405;
export const HEALTH_PATH = "/healthz";
export const STATS_PATH = "/stats";
/**
 * Pages of the health frontend that say, for each connection's backend, how many of its
 * servers HAProxy's own health checks find usable: `GET /backends/<page>` answers lines
 * `<backend> <nbsrv>` (HAProxy's `nbsrv` sample fetch, configuration.txt 7.3.2) for up to
 * BACKENDS_PER_PAGE backends, and 503 past the last page. The bridge reads them so a path is
 * Ready only while a connection through it reaches the instance (network/proxy/path-health.ts).
 * Paged because `http-request return` builds its answer in one buffer (tune.bufsize, 16 kB).
 */
export const BACKENDS_PATH = "/backends";
export const BACKENDS_PER_PAGE = 64;
export const DEFAULT_PGSQL_CHECK_USER = "klutch_proxy_check";
export const DEFAULT_TIMEOUTS: HaproxyTimeouts = {
  connect: "3s",
  client: "1h",
  server: "1h",
  tunnel: "1h",
  clientFin: "30s",
  serverFin: "30s",
  check: "3s",
  inspectDelay: "5s",
};
/**
 * A passing server is checked every 2 s; one check failing brings the next two 500 ms apart, so a
 * lost instance is down about 1 s after its first failed check (it was 4 s with `inter` alone);
 * a down one is checked every second. Only servers in transition or down are checked more often,
 * so the steady load on the instances is what it was.
 */
export const DEFAULT_CHECK: HealthCheck = {
  inter: "2s",
  fastinter: "500ms",
  downinter: "1s",
  fall: 3,
  rise: 2,
};

/** The one server line of each backend is called this; stats and probes look for it. */
export const SERVER_NAME = "instance";

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-f:]*:[0-9a-f:.]*$/i;
const ID = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DURATION = /^\d+(us|ms|s|m|h|d)?$/;
const ROLE = /^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/;

/** Every problem of a connection list, each naming the field and the fix; empty when fine. */
export function connectionProblems(connections: readonly ProxyConnection[]): string[] {
  const problems: string[] = [];
  const ids = new Map<string, number>();
  const serverNames = new Map<string, number>();
  connections.forEach((c, i) => {
    const at = `connections[${i}]`;
    if (typeof c.id !== "string" || !ID.test(c.id)) {
      problems.push(
        `${at}.id ${JSON.stringify(c.id)} must be namespace/name (or a cluster-scoped name): lowercase letters, digits, '-' and '.'`,
      );
    } else if (ids.has(c.id)) {
      problems.push(`${at}.id "${c.id}" duplicates connections[${ids.get(c.id)}]; ids must be unique`);
    } else {
      ids.set(c.id, i);
    }
    if (typeof c.instanceHost !== "string" || c.instanceHost.trim() === "") {
      problems.push(`${at}.instanceHost is empty; set it to the instance's DNS name or IP address`);
    } else if (!hostIsValid(c.instanceHost)) {
      problems.push(
        `${at}.instanceHost ${JSON.stringify(c.instanceHost)} is neither a DNS name nor an IP address`,
      );
    }
    if (typeof c.port !== "number" || !Number.isInteger(c.port) || c.port < 1 || c.port > 65535) {
      problems.push(`${at}.port must be a whole number from 1 to 65535 (got ${JSON.stringify(c.port)})`);
    }
    const sni = sniServerName(c);
    const sniEntry = (c.enhancements ?? []).find((e) => e.ConnectionType === "tlsSNI");
    if (sniEntry && (sni === undefined || !DNS_NAME.test(sni))) {
      problems.push(
        `${at}.enhancements: a tlsSNI entry needs serverName, a DNS name such as pg-1.example.com`,
      );
    } else if (sni !== undefined) {
      const other = serverNames.get(sni);
      if (other !== undefined) {
        problems.push(
          `${at}: tlsSNI serverName "${sni}" is already used by connections[${other}]; names must be unique`,
        );
      } else {
        serverNames.set(sni, i);
      }
    }
  });
  return problems;
}

export function assertValidConnections(connections: readonly ProxyConnection[]): void {
  const problems = connectionProblems(connections);
  if (problems.length > 0) throw new Error(`invalid proxy connections:\n  - ${problems.join("\n  - ")}`);
}

function hostIsValid(host: string): boolean {
  return IPV4.test(host) || DNS_NAME.test(host) || (host.includes(":") && IPV6.test(host));
}

/** HAProxy section names allow letters, digits, '-', '_', '.', ':'; ids never hold '_', so this is one-to-one. */
export function sectionName(prefix: "ft" | "bk", key: string): string {
  return key === SNI_LISTENER ? `${prefix}_tls_sni` : `${prefix}_${key.replace("/", "_")}`;
}

/** The health frontend's rules that answer BACKENDS_PATH's pages. */
function backendPages(backends: readonly string[]): string[] {
  const rules: string[] = [];
  for (let page = 0; page * BACKENDS_PER_PAGE < backends.length; page++) {
    const lines = backends
      .slice(page * BACKENDS_PER_PAGE, (page + 1) * BACKENDS_PER_PAGE)
      .map((b) => `${b} %[nbsrv(${b})]\\n`)
      .join("");
    rules.push(
      `    http-request return status 200 content-type text/plain lf-string "${lines}" if { path ${BACKENDS_PATH}/${page} }`,
    );
  }
  return rules;
}

/**
 * Renders haproxy.cfg. `assignments` maps listener keys (connection ids, or SNI_LISTENER
 * for the shared SNI port) to ports, as the port planner made them.
 */
export function renderHaproxyConfig(
  connections: readonly ProxyConnection[],
  assignments: Readonly<Record<string, number>>,
  options: HaproxyOptions = {},
): string {
  assertValidConnections(connections);
  const t = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const check = { ...DEFAULT_CHECK, ...options.check };
  const intervals = {
    "check.inter": check.inter,
    ...(check.fastinter === undefined ? {} : { "check.fastinter": check.fastinter }),
    ...(check.downinter === undefined ? {} : { "check.downinter": check.downinter }),
  };
  for (const [k, v] of Object.entries({ ...t, ...intervals })) {
    if (!DURATION.test(v))
      throw new Error(`timeouts.${k} "${v}" must be an HAProxy duration such as 5s or 500ms`);
  }
  for (const k of ["fall", "rise"] as const) {
    if (!Number.isInteger(check[k]) || check[k] < 1)
      throw new Error(`check.${k} must be a whole number >= 1`);
  }
  const nbthread = options.nbthread;
  if (nbthread !== undefined && (!Number.isInteger(nbthread) || nbthread < 1 || nbthread > 64)) {
    throw new Error(`nbthread must be a whole number from 1 to 64 (got ${nbthread})`);
  }
  const pgUser = options.pgsqlCheckUser ?? DEFAULT_PGSQL_CHECK_USER;
  if (!ROLE.test(pgUser)) throw new Error(`pgsqlCheckUser "${pgUser}" must be a plain PostgreSQL role name`);
  const bind = options.bindAddress ?? "0.0.0.0";
  const statsPort = options.statsPort ?? DEFAULT_STATS_PORT;
  const healthPort = options.healthPort ?? DEFAULT_HEALTH_PORT;

  const sorted = [...connections].sort((a, b) => compareStrings(a.id, b.id));
  const portOf = (key: string): number => {
    const p = assignments[key];
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > 65535) {
      throw new Error(`no proxy port assigned to "${key}"; run the port planner over every connection first`);
    }
    if (p === statsPort || p === healthPort) {
      throw new Error(
        `port ${p} of "${key}" is the proxy's own stats/health port; reserve it in the port planner`,
      );
    }
    return p;
  };

  const out: string[] = [
    // The header's text is part of every deployed config: changing it rolls every proxy pod on
    // upgrade, so it keeps the path this renderer had when the header was written.
    "# Generated by klutch TcpProxy (network/proxy/haproxy-config.ts); do not edit.",
    "global",
    `    maxconn ${options.maxconn ?? 4096}`,
    ...(nbthread !== undefined ? [`    nbthread ${nbthread}`] : []),
    ...(options.busyPolling ? ["    busy-polling"] : []),
    "    log stdout format raw local0 info",
    "",
    "defaults",
    "    mode tcp",
    "    log global",
    "    option dontlognull",
    // TCP keepalives keep idle DB sessions alive through NAT and conntrack.
    "    option clitcpka",
    "    option srvtcpka",
    // One retry only: HAProxy pauses up to 1s before each retry, and a refused client
    // should hear about it within a couple of seconds.
    "    retries 1",
    `    timeout connect ${t.connect}`,
    `    timeout client ${t.client}`,
    `    timeout server ${t.server}`,
    `    timeout tunnel ${t.tunnel}`,
    `    timeout client-fin ${t.clientFin}`,
    `    timeout server-fin ${t.serverFin}`,
    `    timeout check ${t.check}`,
    "",
    // Instance hosts may be DNS names (Services, cloud endpoints) that change address.
    "resolvers dns",
    "    parse-resolv-conf",
    "    hold valid 10s",
    "",
    "frontend stats",
    "    mode http",
    `    bind 127.0.0.1:${statsPort}`,
    "    no log",
    "    timeout http-request 5s",
    "    stats enable",
    `    stats uri ${STATS_PATH}`,
    "    stats refresh 10s",
    "",
    "frontend health",
    "    mode http",
    `    bind ${bind}:${healthPort}`,
    "    no log",
    "    timeout http-request 5s",
    `    monitor-uri ${HEALTH_PATH}`,
    ...backendPages(sorted.map((c) => sectionName("bk", c.id))),
  ];

  const connectionLog = options.logConnections === false ? ["    no log"] : ["    option tcplog"];
  const sni = sorted.filter((c) => sniServerName(c) !== undefined);
  const direct = sorted.filter((c) => sniServerName(c) === undefined);
  for (const c of direct) {
    out.push(
      "",
      `frontend ${sectionName("ft", c.id)}`,
      `    bind ${bind}:${portOf(c.id)}`,
      ...connectionLog,
      `    default_backend ${sectionName("bk", c.id)}`,
    );
  }
  if (sni.length > 0) {
    const bySni = [...sni].sort((a, b) => compareStrings(sniServerName(a) ?? "", sniServerName(b) ?? ""));
    out.push(
      "",
      `frontend ${sectionName("ft", SNI_LISTENER)}`,
      `    bind ${bind}:${portOf(SNI_LISTENER)}`,
      ...connectionLog,
      `    tcp-request inspect-delay ${t.inspectDelay}`,
      "    tcp-request content accept if { req_ssl_hello_type 1 }",
      // Anything that is not a TLS ClientHello (or never sends one) is turned away.
      "    tcp-request content reject",
      ...bySni.map(
        (c) => `    use_backend ${sectionName("bk", c.id)} if { req_ssl_sni -i ${sniServerName(c)} }`,
      ),
    );
  }
  for (const c of sorted) {
    out.push("", `backend ${sectionName("bk", c.id)}`);
    if (isPostgres(c)) out.push(`    option pgsql-check user ${pgUser}`);
    out.push(
      `    server ${SERVER_NAME} ${hostPort(c.instanceHost, c.port)} check inter ${check.inter}` +
        (check.fastinter === undefined ? "" : ` fastinter ${check.fastinter}`) +
        (check.downinter === undefined ? "" : ` downinter ${check.downinter}`) +
        ` fall ${check.fall} rise ${check.rise}` +
        // An unresolvable name must not stop the whole proxy from starting: the server
        // starts without an address (DOWN) and the resolvers fill it in later.
        (IPV4.test(c.instanceHost) || c.instanceHost.includes(":")
          ? ""
          : " resolvers dns init-addr libc,none"),
    );
  }
  return out.join("\n") + "\n";
}

/** HAProxy reads `addr:port` up to the last colon, so IPv6 needs no brackets; `ipv6@` makes it explicit. */
function hostPort(host: string, port: number): string {
  return host.includes(":") ? `ipv6@${host}:${port}` : `${host}:${port}`;
}

/** Where consumers reach the proxy: the Service's external or in-cluster address. */
export interface ProxyAddress {
  /** Overrides everything (e.g. a DNS name pointing at the load balancer). */
  externalHost?: string;
  /** The LoadBalancer's ingress ip or hostname, once it has one. */
  loadBalancerHost?: string;
  /** For NodePort: a node address app clusters can reach. */
  nodeHost?: string;
  serviceName: string;
  namespace: string;
  clusterDomain?: string;
}

/** The host consumers dial, most specific first; the Service's cluster DNS name as the fallback. */
export function proxyHost(address: ProxyAddress): string {
  const host = address.externalHost || address.loadBalancerHost || address.nodeHost;
  if (host) return host;
  return `${address.serviceName}.${address.namespace}.svc.${address.clusterDomain ?? "cluster.local"}`;
}

/** Each connection's `status.hostForConsumer` and `status.port`, keyed by id. */
export function consumerEndpoints(
  connections: readonly ProxyConnection[],
  assignments: Readonly<Record<string, number>>,
  host: string,
): Record<string, ConsumerEndpoint> {
  const out: Record<string, ConsumerEndpoint> = {};
  for (const c of [...connections].sort((a, b) => compareStrings(a.id, b.id))) {
    const port = assignments[listenerKey(c)];
    if (port === undefined) throw new Error(`no proxy port assigned to connection "${c.id}"`);
    out[c.id] = { hostForConsumer: host, port };
  }
  return out;
}
