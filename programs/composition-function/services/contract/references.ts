/**
 * A data service's credentials as places that name its instance (references), the endpoints
 * they add up to, and the same credentials with every place naming the endpoint the app cluster
 * reaches instead. Each data service lists its references (services/<type>/credentials.ts);
 * this file is the same for all of them.
 *
 * Messages name keys and host:port pairs, never a whole value: a URL's userinfo is a password.
 */
import {
  formatList,
  formatUrl,
  joinHostPort,
  parseList,
  parsePort,
  parseUrl,
  splitHostPort,
  urlDefaultPort,
  type HostPort,
} from "./addresses.js";

/** A binding's credentials as Crossplane hands them to the function: bytes by key. */
export type Credentials = Readonly<Record<string, Buffer>>;

/**
 * One key of the credentials that names the instance: a bare host (`host`), a list of hosts,
 * each maybe `host:port` (`hosts`), one URL (`url`), or a list of URLs (`urls`). A host without
 * its own port takes the one in `portKey`, else `defaultPort` (a URL's: else its scheme's).
 */
export interface Reference {
  kind: "host" | "hosts" | "url" | "urls";
  key: string;
  /** Upstream's label for the endpoint (provider-anynines' connectionDetails label, e.g. SQL). */
  label: string;
  portKey?: string;
  defaultPort?: number;
  /** Without it the credentials are not complete yet; other references are used where present. */
  required?: boolean;
}

/** An endpoint of the instance: one connection each. */
export interface Endpoint extends HostPort {
  label: string;
}

export type Extraction =
  { kind: "found"; endpoints: Endpoint[] } | { kind: "waiting" | "invalid"; message: string };

/** Where a reference's value names hosts: each entry, its hosts, whether it wrote its own ports. */
interface Occurrence {
  ref: Reference;
  hosts: { endpoint: HostPort; ownPort: boolean }[][];
}

const text = (credentials: Credentials, key: string) => credentials[key]?.toString("utf8");

/** The identity of an endpoint: one connection per host:port, however many keys name it. */
export const addressOf = (e: HostPort) => `${e.host.toLowerCase()}:${e.port}`;

function hostsOf(
  ref: Reference,
  entry: string,
  defaultPort: number | undefined,
): { endpoint: HostPort; ownPort: boolean }[] | string {
  const parts =
    ref.kind === "url" || ref.kind === "urls"
      ? parseUrl(entry)?.hosts
      : [splitHostPort(entry)].filter((h) => h !== undefined);
  if (!parts || parts.length === 0)
    return ref.kind === "url" || ref.kind === "urls"
      ? "is not a URL of the form scheme://host:port"
      : "does not name a host";
  const scheme = parseUrl(entry)?.scheme;
  const fallback = scheme !== undefined ? urlDefaultPort(scheme, defaultPort) : defaultPort;
  const found = [];
  for (const part of parts) {
    const port = part.port !== undefined ? parsePort(part.port.trim()) : fallback;
    if (port === undefined)
      return part.port !== undefined
        ? `names host ${part.host} with port ${JSON.stringify(part.port)}, not a port from 1 to 65535`
        : `names host ${part.host} without a port, and ${ref.portKey ? `${JSON.stringify(ref.portKey)} holds none` : "its scheme has no default port"}`;
    found.push({ endpoint: { host: part.host, port }, ownPort: part.port !== undefined });
  }
  return found;
}

function occurrences(credentials: Credentials, refs: readonly Reference[]): Occurrence[] | Extraction {
  const result: Occurrence[] = [];
  for (const ref of refs) {
    const raw = text(credentials, ref.key);
    if (raw === undefined || raw.trim() === "") {
      if (ref.required)
        return { kind: "waiting", message: `the credentials have no ${JSON.stringify(ref.key)} yet` };
      continue;
    }
    let defaultPort = ref.defaultPort;
    const portText = ref.portKey !== undefined ? text(credentials, ref.portKey) : undefined;
    if (portText !== undefined) {
      defaultPort = parsePort(portText.trim());
      if (defaultPort === undefined)
        return {
          kind: "invalid",
          message: `the credentials' ${JSON.stringify(ref.portKey)} is ${JSON.stringify(portText)}, not a port from 1 to 65535`,
        };
    }
    const entries = ref.kind === "hosts" || ref.kind === "urls" ? parseList(raw).entries : [raw.trim()];
    const hosts = [];
    for (const entry of entries) {
      const found = hostsOf(ref, entry, defaultPort);
      if (typeof found === "string")
        return { kind: "invalid", message: `the credentials' ${JSON.stringify(ref.key)} ${found}` };
      hosts.push(found);
    }
    result.push({ ref, hosts });
  }
  return result;
}

/** The instance's endpoints the credentials name, each once, in the order the references name them. */
export function endpointsOf(credentials: Credentials, refs: readonly Reference[]): Extraction {
  const found = occurrences(credentials, refs);
  if (!Array.isArray(found)) return found;
  const endpoints = new Map<string, Endpoint>();
  for (const { ref, hosts } of found)
    for (const { endpoint } of hosts.flat())
      if (!endpoints.has(addressOf(endpoint)))
        endpoints.set(addressOf(endpoint), { ...endpoint, label: ref.label });
  if (endpoints.size === 0)
    return {
      kind: "waiting",
      message: `the credentials name no endpoint yet (none of ${refs.map((r) => JSON.stringify(r.key)).join(", ")})`,
    };
  return { kind: "found", endpoints: [...endpoints.values()] };
}

/**
 * The credentials with every reference naming, instead of an endpoint, where the app cluster
 * reaches it. A port key is written by the first reference that uses it; a later one whose
 * endpoint's port differs (each connection has its own) writes its hosts as host:port.
 */
export function rewriteCredentials(
  credentials: Credentials,
  refs: readonly Reference[],
  consumerOf: (endpoint: HostPort) => HostPort,
): Record<string, Buffer> {
  const found = occurrences(credentials, refs);
  const out: Record<string, Buffer> = { ...credentials };
  if (!Array.isArray(found)) return out;
  const ports = new Map<string, number>();
  for (const { ref, hosts } of found) {
    const raw = text(credentials, ref.key)!;
    if (ref.kind === "url" || ref.kind === "urls") {
      const { entries, style } =
        ref.kind === "urls" ? parseList(raw) : { entries: [raw.trim()], style: "single" as const };
      const urls = entries.map((e, i) =>
        formatUrl(
          parseUrl(e)!,
          hosts[i]!.map((h) => consumerOf(h.endpoint)),
        ),
      );
      out[ref.key] = Buffer.from(ref.kind === "urls" ? formatList(urls, style) : urls[0]!);
      continue;
    }
    const { style } = ref.kind === "hosts" ? parseList(raw) : { style: "single" as const };
    const consumers = hosts.flat().map((h) => ({ ...h, consumer: consumerOf(h.endpoint) }));
    if (ref.portKey !== undefined && !ports.has(ref.portKey) && consumers[0]) {
      ports.set(ref.portKey, consumers[0].consumer.port);
      out[ref.portKey] = Buffer.from(String(consumers[0].consumer.port));
    }
    const keyPort = ref.portKey !== undefined ? ports.get(ref.portKey) : undefined;
    const written = consumers.map(({ consumer, ownPort }) =>
      ownPort || consumer.port !== keyPort ? joinHostPort(consumer.host, consumer.port) : consumer.host,
    );
    out[ref.key] = Buffer.from(formatList(written, style));
  }
  return out;
}
