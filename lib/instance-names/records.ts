/**
 * Instance names: which DNS names an app cluster answers for its data-service instances, decided
 * from the ServiceBinding claims' `status.managed.instanceNames`, and the hosts(5) file CoreDNS's
 * `hosts` plugin serves them from. Pure: the watcher (programs/instance-names/watcher.ts) passes
 * the claims in and resolves host-name addresses itself.
 *
 * A binding's Secret keeps the instance's own host name so TLS clients verifying the server name
 * work; in the app cluster that name must lead to the network path's address. The claims are
 * written by the control plane, but whatever a claim says here becomes DNS for every pod in the
 * cluster: so only names inside the configured zones are served, and where two claims disagree
 * about a name the older one keeps it.
 */
import { DNS_LABEL } from "../net/dns";

export interface ClaimLike {
  metadata: { namespace?: string; name?: string; creationTimestamp?: string; uid?: string };
  status?: unknown;
}

export interface NameRecord {
  name: string;
  /** An IPv4 address, or a DNS host name the watcher resolves. */
  address: string;
  /** The claim that named it, `namespace/name`. */
  claim: string;
}

const IPV4_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const IPV4 = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);

/** A dotted-quad IPv4 address (no leading zeros: some parsers read them as octal). */
export function isIPv4(value: string): boolean {
  return IPV4.test(value);
}

/** A zone or name as compared: lowercase, without the root's trailing dot. */
export function normaliseZone(zone: string): string {
  return zone.toLowerCase().replace(/\.$/, "");
}

/**
 * A DNS host name (normalised): labels of letters, digits and '-', at most 253 characters, and a
 * last label that is not all digits, so a mistyped IPv4 address (10.0.0.256) is not taken for one.
 */
export function isDnsName(value: string): boolean {
  const labels = value.split(".");
  return value.length <= 253 && labels.every((l) => DNS_LABEL.test(l)) && !/^\d+$/.test(labels.at(-1) ?? "");
}

/** Whether `name` is one of `zones` or inside one (case and a trailing dot ignored). */
export function inZones(name: string, zones: readonly string[]): boolean {
  const n = normaliseZone(name);
  return zones.map(normaliseZone).some((z) => z !== "" && (n === z || n.endsWith(`.${z}`)));
}

const claimId = (c: ClaimLike) => `${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`;

/** Oldest first (creationTimestamp; one without sorts last), then by namespace/name. */
function olderFirst(a: ClaimLike, b: ClaimLike): number {
  const at = (c: ClaimLike) => Date.parse(c.metadata.creationTimestamp ?? "") || Number.POSITIVE_INFINITY;
  return at(a) - at(b) || (claimId(a) < claimId(b) ? -1 : claimId(a) > claimId(b) ? 1 : 0);
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** One claim's entries as records; what is wrong with any of them goes to `problems`. */
function claimRecords(claim: ClaimLike, zones: readonly string[], problems: string[]): NameRecord[] {
  const id = claimId(claim);
  const list = field(field(claim.status, "managed"), "instanceNames");
  if (list === undefined) return [];
  const at = "status.managed.instanceNames";
  if (!Array.isArray(list)) {
    problems.push(`claim ${id}: ${at} is ${JSON.stringify(list)}, not a list of {name, address}; ignored`);
    return [];
  }
  const records: NameRecord[] = [];
  list.forEach((entry: unknown, i) => {
    const rawName = field(entry, "name");
    const rawAddress = field(entry, "address");
    const where = `claim ${id}: ${at}[${i}]`;
    if (typeof rawName !== "string" || typeof rawAddress !== "string") {
      problems.push(`${where} is ${JSON.stringify(entry)}: needs a string name and address; ignored`);
      return;
    }
    const name = normaliseZone(rawName);
    const address = normaliseZone(rawAddress);
    if (!isDnsName(name))
      problems.push(`${where}.name ${JSON.stringify(rawName)} is not a DNS name; ignored`);
    else if (!inZones(name, zones))
      problems.push(
        `${where}.name ${JSON.stringify(rawName)} is outside the zones served (${zones.join(", ")}); ignored: only names in a --zone are answered`,
      );
    else if (!isIPv4(address) && !isDnsName(address))
      problems.push(
        `${where}.address ${JSON.stringify(rawAddress)} (for ${name}) is neither an IPv4 address nor a DNS host name; ignored`,
      );
    else if (!isIPv4(address) && inZones(address, zones))
      problems.push(
        `${where}.address ${JSON.stringify(rawAddress)} (for ${name}) is inside the zones served, so it would resolve through these very names; ignored: give the path's own address`,
      );
    else records.push({ name, address, claim: id });
  });
  return records;
}

/**
 * The records the claims make, sorted by name then address (duplicates once). A name belongs to
 * the oldest claim naming it; a younger claim giving it other addresses is refused, with a problem.
 */
export function recordsOf(
  claims: ClaimLike[],
  zones: readonly string[],
): { records: NameRecord[]; problems: string[] } {
  const problems: string[] = [];
  const owner = new Map<string, { claim: string; addresses: Set<string> }>();
  const records: NameRecord[] = [];
  for (const claim of [...claims].sort(olderFirst)) {
    const own = claimRecords(claim, zones, problems);
    for (const name of new Set(own.map((r) => r.name))) {
      const mine = own.filter((r) => r.name === name);
      const held = owner.get(name);
      if (!held) {
        owner.set(name, { claim: mine[0]?.claim ?? "", addresses: new Set(mine.map((r) => r.address)) });
        records.push(...mine);
      } else if (mine.some((r) => !held.addresses.has(r.address)))
        problems.push(
          `claim ${claimId(claim)}: status.managed.instanceNames names ${name} at ${mine.map((r) => r.address).join(", ")}, but the older claim ${held.claim} has it at ${[...held.addresses].join(", ")}; ignored: the older claim keeps the name`,
        );
    }
  }
  const key = (r: NameRecord) => `${r.name} ${r.address}`;
  const unique = [...new Map(records.map((r) => [key(r), r])).values()];
  return { records: unique.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)), problems };
}

/** The hosts(5) file of the names: `<ip> <name>` per address, sorted, under a header comment. */
export function hostsFile(entries: { name: string; ipv4: string[] }[]): string {
  const lines = new Set<string>();
  for (const { name, ipv4 } of entries) {
    // A newline or space in either would let one entry write others: the records were checked,
    // so this is a bug upstream, said loudly.
    if (!isDnsName(name)) throw new Error(`hostsFile: ${JSON.stringify(name)} is not a DNS name`);
    for (const ip of ipv4) {
      if (!isIPv4(ip))
        throw new Error(`hostsFile: ${JSON.stringify(ip)} (for ${name}) is not an IPv4 address`);
      lines.add(`${ip} ${name}`);
    }
  }
  const byName = (l: string) => {
    const [ip = "", name = ""] = l.split(" ");
    return `${name} ${ip
      .split(".")
      .map((o) => o.padStart(3, "0"))
      .join(".")}`;
  };
  const sorted = [...lines].sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
  const header =
    "# Instance names of this cluster's service bindings, written by the instance-names watcher.";
  return [header, ...sorted].map((l) => `${l}\n`).join("");
}
