/**
 * The two values Klutch writes into a cluster's Corefile for instance names, checked before they
 * are written: the stub zones and the names server's address. Both become Corefile text, so
 * anything but a plain DNS name or IP address could make CoreDNS refuse the whole file, or write
 * other directives into it.
 *
 * Imports nothing: the Corefile provider (components/instance-names/corefile-stub-zones.ts) runs
 * this code after Pulumi has serialised it by value.
 */

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A zone as CoreDNS compares zones: lowercase, without the final dot ("." stays "."). */
export function normalZone(zone: string): string {
  const lower = zone.toLowerCase();
  return lower.length > 1 && lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** Why `zone` cannot be a stub zone, or undefined when it can. */
export function zoneProblem(zone: unknown): string | undefined {
  if (typeof zone !== "string" || zone.trim() === "")
    return `zone ${JSON.stringify(zone)} is not a DNS name; name a zone such as a9s-instances.svc.cluster.local`;
  const name = normalZone(zone);
  if (name === ".")
    return 'zone "." is the root zone: it would send every name the cluster looks up to the names server; name only the zones of instance names, e.g. service.dc1.consul';
  if (name.length > 253 || !name.split(".").every((label) => LABEL.test(label)))
    return `zone "${zone}" is not a valid DNS name (dot-separated labels of letters, digits and '-', each at most 63 characters, 253 in all); write it like service.dc1.consul`;
  return undefined;
}

/** What is wrong with a list of stub zones: not a list, empty, a bad zone, a zone named twice. */
export function zoneListProblems(zones: unknown): string[] {
  if (!Array.isArray(zones))
    return [`zones ${JSON.stringify(zones)} is not a list; give the zones as a list of DNS names`];
  if (zones.length === 0)
    return [
      "zones is empty; name at least one zone (e.g. a9s-instances.svc.cluster.local), or remove the resource",
    ];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const zone of zones as unknown[]) {
    const problem = zoneProblem(zone);
    if (problem) problems.push(problem);
    else if (seen.has(normalZone(zone as string)))
      problems.push(`zone "${zone as string}" is named twice in zones; name each zone once`);
    else seen.add(normalZone(zone as string));
  }
  return problems;
}

function isIpv4(value: string): boolean {
  const parts = value.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

function isIpv6(value: string): boolean {
  let text = value;
  if (value.includes(".")) {
    // An IPv4 tail (::ffff:10.0.0.1) stands for the last two groups.
    const colon = value.lastIndexOf(":");
    if (!isIpv4(value.slice(colon + 1))) return false;
    text = `${value.slice(0, colon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return false;
  return halves.length === 2 ? groups.length <= 7 : groups.length === 8;
}

/**
 * Why `address` cannot be the `forward` target, or undefined: an IPv4 or IPv6 address (the names
 * server's ClusterIP), optionally `[v6]:port` or `v4:port`, optionally with `dns://`. CoreDNS's
 * forward plugin takes no host names, and a Service name would have to be resolved by the very
 * DNS being configured.
 */
export function serverAddressProblem(address: unknown): string | undefined {
  const fix =
    "give the names server's ClusterIP, optionally with a port: 10.96.0.53, 10.96.0.53:53 or [fd00::53]:53";
  if (typeof address !== "string") return `serverAddress ${JSON.stringify(address)} is not a string; ${fix}`;
  const rest = address.startsWith("dns://") ? address.slice("dns://".length) : address;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(rest);
  const withPort = /^([\d.]+)(?::(\d{1,5}))?$/.exec(rest);
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : withPort
      ? [withPort[1]!, withPort[2]]
      : [rest, undefined];
  const hostOk = bracketed ? isIpv6(host) : isIpv4(host) || (!withPort && isIpv6(host));
  const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
  if (hostOk && portOk) return undefined;
  return `serverAddress "${address}" is not an IP address with an optional port (CoreDNS's forward plugin takes no host names); ${fix}`;
}
