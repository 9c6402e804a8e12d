/**
 * The addresses the local gateway hands out: tunnel addresses from the tunnel CIDR, and a /30
 * per veth link from the link base. Pure arithmetic on dotted IPv4 strings, small enough to
 * travel with the serialised providers.
 */

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

function numberToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

/**
 * The client tunnel addresses of `cidr`, in order. The network address, the gateway (the first
 * host) and the broadcast address are not handed out.
 */
export function clientTunnelAddresses(cidr: string): string[] {
  const [ip = "", bits] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  const first = ipv4ToNumber(ip) - (ipv4ToNumber(ip) % size);
  const out: string[] = [];
  for (let a = first + 2; a < first + size - 1; a++) out.push(numberToIpv4(a));
  return out;
}

/** The link slots a group can claim: `<base>+<n>` for n below `count`. */
export function linkSlots(base: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${base}+${i}`);
}

/** The two ends of a slot's /30: the gateway's (first host) and the client's (second). */
export function linkAddresses(slot: string, base: string): { gateway: string; client: string } {
  const n = Number(slot.split("+")[1]);
  const net = ipv4ToNumber(base) + 4 * n;
  return { gateway: numberToIpv4(net + 1), client: numberToIpv4(net + 2) };
}
