/**
 * The stub zones of instance names in a cluster's own Corefile (CoreDNS's ConfigMap, as kubeadm
 * and EKS deploy it): one server block for the instance-name zones that forwards them to Klutch's
 * names server, the Kubernetes "stub domain" customisation. CoreDNS answers a query from the
 * server block with the longest matching zone, so the block for `a9s-instances.svc.cluster.local`
 * wins over `.:53`'s kubernetes plugin for that subzone; the `reload` plugin picks the change up.
 *
 * The Corefile is someone else's: Klutch owns only its marked section (corefile-section.ts),
 * judges the rest before writing (a zone CoreDNS would refuse, a file it could not extend), and
 * takes the section out again leaving the rest byte for byte. Pure: the caller reads and writes.
 */

import { BEGIN_MARKER, END_MARKER, dropSection, putSection, sectionBounds } from "./corefile-section";
import { corefileOutline, serverKey } from "./corefile-syntax";
import { normalZone, serverAddressProblem, zoneListProblems } from "./corefile-values";

export { BEGIN_MARKER, END_MARKER } from "./corefile-section";

/** The marked section: markers, and one server block for `zones` forwarding to `serverAddress`. */
export function stubZonesSection(zones: readonly string[], serverAddress: string): string {
  const problems = [...zoneListProblems(zones), serverAddressProblem(serverAddress) ?? []].flat();
  if (problems.length > 0) throw new Error(problems.join("; "));
  return [
    BEGIN_MARKER,
    `${zones.map(normalZone).join(" ")} {`,
    "    errors",
    // Short: a name changes as soon as a binding does.
    "    cache 5",
    `    forward . ${serverAddress}`,
    "}",
    END_MARKER,
    "",
  ].join("\n");
}

/** The Corefile with Klutch's section for `zones` replacing the one it has, or appended. Idempotent. */
export function withStubZones(corefile: string, zones: readonly string[], serverAddress: string): string {
  return putSection(corefile, stubZonesSection(zones, serverAddress).slice(0, -1));
}

/** The Corefile without Klutch's section; unchanged when it has none. */
export function withoutStubZones(corefile: string): string {
  return dropSection(corefile);
}

/** The zones and address of Klutch's section as the Corefile has them now, or undefined. */
export function currentStubZones(corefile: string): { zones: string[]; serverAddress?: string } | undefined {
  const at = sectionBounds(corefile);
  if (!at) return undefined;
  const [block] = corefileOutline(corefile.slice(at.start, at.end)).blocks;
  const forward = block?.directives.find((d) => d.name === "forward");
  return {
    zones: (block?.keys ?? []).map((key) => serverKey(key).zone),
    ...(forward?.args[1] ? { serverAddress: forward.args[1] } : {}),
  };
}

/**
 * Why Klutch must not write its section for `zones` into this Corefile: bad zones, markers that do
 * not pair up, a file CoreDNS itself could not read, a zone another server block already declares
 * on port 53 (CoreDNS refuses the whole file then: `reload` keeps the old one, so the names would
 * never resolve), or a zone that would take the cluster's own names from its kubernetes plugin.
 */
export function stubZoneProblems(corefile: string, zones: readonly string[]): string[] {
  const problems = zoneListProblems(zones);
  let ownLines = { firstLine: 0, lastLine: -1 };
  try {
    ownLines = sectionBounds(corefile) ?? ownLines;
  } catch (err) {
    problems.push((err as Error).message);
  }
  const outline = corefileOutline(corefile);
  if (outline.problem)
    problems.push(
      `the Corefile cannot be read safely: ${outline.problem}; fix it first (CoreDNS cannot read it either)`,
    );
  const loose = outline.loose.filter((tokens) => tokens[0]?.text !== "import");
  if (loose.length > 0)
    problems.push(
      `the Corefile has text outside any server block at line ${loose[0]![0]!.line} (a single server block may be written without braces, but not beside another); wrap it in "<zones> { … }" first`,
    );
  const ours = zones.filter((z) => typeof z === "string").map(normalZone);
  const foreign = outline.blocks.filter((b) => b.line < ownLines.firstLine || b.line > ownLines.lastLine);
  for (const block of foreign) {
    for (const key of block.keys) {
      const { transport, zone, port } = serverKey(key);
      if (transport !== "dns" || (port !== "" && port !== "53") || !ours.includes(zone)) continue;
      problems.push(
        `zone "${zone}" is already declared by the Corefile's server block "${block.keys.join(" ")}" at line ${block.line}, and CoreDNS refuses a zone declared twice on one port; ` +
          `leave "${zone}" out of the instance-name zones, or remove that server block so that Klutch's block serves the zone`,
      );
    }
    for (const kubernetes of block.directives.filter((d) => d.name === "kubernetes")) {
      const served = kubernetes.args.length > 0 ? kubernetes.args : block.keys;
      for (const clusterZone of served.map((z) => serverKey(z).zone)) {
        const taken = ours.filter((z) =>
          [clusterZone, `svc.${clusterZone}`, `pod.${clusterZone}`].includes(z),
        );
        const above = ours.filter((z) => z !== "." && clusterZone.endsWith(`.${z}`));
        for (const zone of [...taken, ...above])
          problems.push(
            `zone "${zone}" would take the names the kubernetes plugin serves under "${clusterZone}" (server block at line ${block.line}) away from the cluster DNS; ` +
              `use a zone below them instead, e.g. a9s-instances.svc.${clusterZone}`,
          );
      }
    }
  }
  return problems;
}
