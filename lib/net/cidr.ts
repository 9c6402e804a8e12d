import { Address4 } from "ip-address";

const DOTTED_QUAD = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A dotted IPv4 address (ip-address alone also takes a CIDR or a partial address). */
export function isIpv4(value: unknown): value is string {
  return typeof value === "string" && DOTTED_QUAD.test(value) && Address4.isValid(value);
}

/** An IPv4 CIDR block as an inclusive range of addresses. */
export interface CidrRange {
  cidr: string;
  first: bigint;
  last: bigint;
  prefix: number;
}

/** Why a string is not a usable IPv4 CIDR, or undefined when it is one. */
export function cidrProblem(value: string): string | undefined {
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(value) || !Address4.isValid(value)) {
    return "must be an IPv4 CIDR block such as 10.20.0.0/16";
  }
  const addr = new Address4(value);
  const network = addr.startAddress().address;
  if (network !== addr.addressMinusSuffix) {
    return `has host bits set; the network address is ${network}/${addr.subnetMask}`;
  }
  return undefined;
}

export function parseCidr(value: string): CidrRange {
  const problem = cidrProblem(value);
  if (problem) throw new Error(`${value} ${problem}`);
  const addr = new Address4(value);
  return {
    cidr: value,
    first: addr.startAddress().bigInt(),
    last: addr.endAddress().bigInt(),
    prefix: addr.subnetMask,
  };
}

export function cidrsOverlap(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  return x.first <= y.last && y.first <= x.last;
}

/** Number of addresses in the block. */
export function cidrSize(cidr: string): bigint {
  const r = parseCidr(cidr);
  return r.last - r.first + 1n;
}

export function addressToString(value: bigint): string {
  return Address4.fromBigInt(value).address;
}

export function addressInCidr(address: string, cidr: string): boolean {
  if (!Address4.isValid(address)) return false;
  const a = new Address4(address).bigInt();
  const r = parseCidr(cidr);
  return a >= r.first && a <= r.last;
}

/** Whether every address of `inner` lies in `outer`. */
export function cidrInside(inner: string, outer: string): boolean {
  const a = parseCidr(inner);
  const b = parseCidr(outer);
  return a.first >= b.first && a.last <= b.last;
}
