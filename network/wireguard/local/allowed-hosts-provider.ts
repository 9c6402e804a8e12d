import { inNs } from "./commands";
import type { CompleteProvider, LocalAllowedHostsInputs } from "./types";

/**
 * The provider of `LocalWireguardAllowedHosts`, one per group: the client's AllowedIPs and
 * routes and the gateway filter's flows of this client, changed in place (`wg set`, one
 * `nft -f` transaction), so a connection coming or going never re-keys the tunnel.
 */

/** An element of an nftables set as `nft -j` prints it: a value, or a concatenation. */
type NftElement = string | number | { concat: (string | number)[] };

/** The part of `nft -j list set` read here. */
interface NftSetListing {
  nftables: { set?: { elem?: NftElement[] } }[];
}

function isNftSetListing(value: unknown): value is NftSetListing {
  return (
    typeof value === "object" && value !== null && Array.isArray((value as { nftables?: unknown }).nftables)
  );
}

/** The elements of an nftables set, concatenations written "a . b . c"; none if it is missing. */
function setElements(ns: string, table: string, set: string): string[] {
  const out = inNs(ns, ["nft", "-j", "list", "set", "inet", table, set], { allowFail: true });
  if (!out) return [];
  const parsed: unknown = JSON.parse(out);
  if (!isNftSetListing(parsed)) throw new Error(`nft -j list set ${table} ${set} printed no nftables list`);
  const elems = parsed.nftables.find((x) => x.set)?.set?.elem ?? [];
  return elems.map((e) => (typeof e === "object" ? e.concat.join(" . ") : String(e)));
}

/** Loads nft commands in one transaction, when there are any. */
function nftTransaction(ns: string, lines: string[]): void {
  if (lines.length > 0) inNs(ns, ["nft", "-f", "-"], { input: `${lines.join("\n")}\n` });
}

/** Moves the client's AllowedIPs, routes and gateway flows from `olds` to `news`. */
function sync(olds: LocalAllowedHostsInputs | undefined, news: LocalAllowedHostsInputs): void {
  const ns = news.netns;
  const gone = (olds?.allowedIps ?? []).filter((a) => !news.allowedIps.includes(a));
  // `wg set … allowed-ips` replaces the peer's list in place: no handshake, no new key.
  inNs(ns, [
    "wg",
    "set",
    news.ifname,
    "peer",
    news.gatewayPublicKey,
    "allowed-ips",
    news.allowedIps.join(","),
  ]);
  for (const a of news.allowedIps) inNs(ns, ["ip", "route", "replace", a, "dev", news.ifname]);
  for (const a of gone) inNs(ns, ["ip", "route", "del", a, "dev", news.ifname], { allowFail: true });
  // The gateway's flows of this client, in one transaction: added ones and removed ones
  // switch together, and the other clients' elements are never touched.
  const present = new Set(setElements(news.dataNetns, news.nftTable, "flows"));
  const lines: string[] = [];
  for (const f of news.flows)
    if (!present.has(f)) lines.push(`add element inet ${news.nftTable} flows { ${f} }`);
  for (const f of olds?.flows ?? [])
    if (!news.flows.includes(f) && present.has(f))
      lines.push(`delete element inet ${news.nftTable} flows { ${f} }`);
  // Services only keep the underlay away from served ports; other groups may serve the
  // same host:port, so they are added, never removed here.
  const services = new Set(setElements(news.dataNetns, news.nftTable, "services"));
  for (const s of news.services)
    if (!services.has(s)) lines.push(`add element inet ${news.nftTable} services { ${s} }`);
  nftTransaction(news.dataNetns, lines);
}

/** Whether the gateway still has these flows and the client exactly these AllowedIPs. */
function inPlace(o: LocalAllowedHostsInputs): boolean {
  const flows = new Set(setElements(o.dataNetns, o.nftTable, "flows"));
  if (!o.flows.every((f) => flows.has(f))) return false;
  const current = inNs(o.netns, ["wg", "show", o.ifname, "allowed-ips"], { allowFail: true });
  const list = (current.split("\t")[1] ?? "").trim().split(/\s+/);
  return o.allowedIps.every((a) => list.includes(a)) && list.length === o.allowedIps.length;
}

export const localAllowedHostsProvider: CompleteProvider<
  LocalAllowedHostsInputs,
  LocalAllowedHostsInputs,
  "diff" | "update" | "delete"
> = {
  create(inputs) {
    sync(undefined, inputs);
    return Promise.resolve({ id: `${inputs.netns}-allowed-hosts`, outs: inputs });
  },

  diff(_id, olds, news) {
    if (olds.netns !== news.netns || olds.dataNetns !== news.dataNetns)
      return Promise.resolve({ changes: true, replaces: ["netns"], deleteBeforeReplace: true });
    const same = JSON.stringify(olds) === JSON.stringify(news);
    // A restarted gateway or client lost the elements and AllowedIPs: put them back.
    return Promise.resolve({ changes: !same || !inPlace(olds) });
  },

  update(_id, olds, news) {
    sync(olds, news);
    return Promise.resolve({ outs: news });
  },

  delete(_id, props) {
    const present = new Set(setElements(props.dataNetns, props.nftTable, "flows"));
    nftTransaction(
      props.dataNetns,
      props.flows
        .filter((f) => present.has(f))
        .map((f) => `delete element inet ${props.nftTable} flows { ${f} }`),
    );
    return Promise.resolve();
  },
};
