/**
 * The addresses in a binding's credentials, as provider-anynines writes them: the broker's
 * credentials flattened into a Secret (pkg/utils/flattenmap.go, anynines/klutchio 0b4539e):
 * nested maps as dotted keys, every value printed by Go's fmt.Sprint, so a list of hosts is
 * `[h0 h1]`. One value may name one host, a list of hosts (each maybe `host:port`), one URL
 * (whose authority may list several hosts, as MongoDB's does) or a list of URLs.
 *
 * Pure: the parsing and printing of one value, no knowledge of any data service.
 */

/** One host and port as a client dials it. */
export interface HostPort {
  host: string;
  port: number;
}

/** How a list value was printed, so that it is written back the same way. */
export type ListStyle = "single" | "go" | "json";

/** A list value's entries: `[a b]` as Go prints a slice, `["a"]` as JSON, or one bare value. */
export function parseList(raw: string): { entries: string[]; style: ListStyle } {
  const value = raw.trim();
  if (!value.startsWith("[") || !value.endsWith("]")) return { entries: [value], style: "single" };
  if (value.includes('"')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed) && parsed.every((e): e is string => typeof e === "string"))
        return { entries: parsed.map((e) => e.trim()), style: "json" };
    } catch {
      // Not JSON after all: read it as Go prints it.
    }
  }
  const entries = value
    .slice(1, -1)
    .split(/[\s,]+/)
    .map((e) => e.replace(/^"|"$/g, ""))
    .filter((e) => e !== "");
  return { entries, style: "go" };
}

export function formatList(entries: string[], style: ListStyle): string {
  if (style === "json") return JSON.stringify(entries);
  if (style === "single" && entries.length === 1) return entries[0]!;
  return `[${entries.join(" ")}]`;
}

/** A port from its decimal digits, nothing around them; undefined for anything else. */
export function parsePort(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`; a bare IPv6 address is a host without a port. */
export function splitHostPort(entry: string): { host: string; port?: string } | undefined {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(.*))?$/.exec(entry);
  if (bracketed)
    return { host: bracketed[1]!, ...(bracketed[2] !== undefined ? { port: bracketed[2] } : {}) };
  const colons = entry.split(":").length - 1;
  if (colons > 1) return /^[0-9A-Fa-f:.]+$/.test(entry) ? { host: entry } : undefined;
  const [host, port] = entry.split(":") as [string, string | undefined];
  if (host === "" || /[\s/@?#[\]]/.test(host)) return undefined;
  return port !== undefined ? { host, port } : { host };
}

/** host:port as a URI's authority and a `hosts` entry write it: an IPv6 address in brackets. */
export function joinHostPort(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/** The ports a URL without one means, by scheme (each scheme's registered default). */
const SCHEME_PORTS: Readonly<Record<string, number>> = {
  http: 80,
  https: 443,
  amqp: 5672,
  amqps: 5671,
  mongodb: 27017,
  postgres: 5432,
  postgresql: 5432,
  mysql: 3306,
  redis: 6379,
  rediss: 6379,
};

/** A URL split around its authority's hosts: scheme://[userinfo@]h1[:p1],h2[:p2][/path…]. */
export interface ParsedUrl {
  scheme: string;
  userinfo: string;
  hosts: { host: string; port?: string }[];
  tail: string;
}

export function parseUrl(raw: string): ParsedUrl | undefined {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw.trim());
  if (!match) return undefined;
  const rest = raw.trim().slice(match[0].length);
  // The authority ends at the path, query or fragment; a userinfo holds none of /?# unencoded.
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf("@");
  const hosts = authority
    .slice(at + 1)
    .split(",")
    .map(splitHostPort);
  if (hosts.length === 0 || hosts.some((h) => h === undefined)) return undefined;
  return {
    scheme: match[1]!.toLowerCase(),
    userinfo: at < 0 ? "" : authority.slice(0, at + 1),
    hosts: hosts as { host: string; port?: string }[],
    tail: end < 0 ? "" : rest.slice(end),
  };
}

export function formatUrl(url: ParsedUrl, hosts: HostPort[]): string {
  const authority = hosts.map((h) => joinHostPort(h.host, h.port)).join(",");
  return `${url.scheme}://${url.userinfo}${authority}${url.tail}`;
}

/** The port a URL's host without one means: the reference's, else its scheme's. */
export function urlDefaultPort(scheme: string, fallback?: number): number | undefined {
  return fallback ?? SCHEME_PORTS[scheme];
}
