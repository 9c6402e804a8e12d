import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";

/**
 * WireGuard keys are raw 32-byte Curve25519 (X25519) keys, written as standard base64
 * (44 characters, one '=' of padding), the format `wg genkey` and `wg pubkey` use.
 * node:crypto speaks DER, not raw keys, so the helpers here wrap and unwrap the fixed
 * ASN.1 headers of X25519 keys (RFC 8410: OID 1.3.101.110).
 */

export const WG_KEY_BYTES = 32;

/** PKCS#8 PrivateKeyInfo header for an X25519 key; the 32 raw key bytes follow. */
const PKCS8_X25519_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");
/** SubjectPublicKeyInfo header for an X25519 key; the 32 raw key bytes follow. */
const SPKI_X25519_PREFIX = Buffer.from("302a300506032b656e032100", "hex");

export interface WireguardKeyPairValue {
  privateKey: string;
  publicKey: string;
}

/** Why a string is not a WireGuard key, or undefined when it is one. */
export function keyProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0) {
    return "is missing; it must be a base64 WireGuard key (44 characters, as printed by `wg genkey`/`wg pubkey`)";
  }
  if (!/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(value)) {
    return "is not a base64 WireGuard key: it must be 32 bytes in standard base64 (44 characters ending in '='), as printed by `wg genkey`/`wg pubkey`";
  }
  return undefined;
}

/** Throws an error that names the field when `value` is not a WireGuard key. */
export function assertWireguardKey(value: unknown, field: string): asserts value is string {
  const problem = keyProblem(value);
  if (problem) throw new Error(`${field} ${problem}`);
}

/** The public key of a base64 private key, the same as `echo <key> | wg pubkey`. */
export function publicKeyFromPrivate(privateKey: string, field = "privateKey"): string {
  assertWireguardKey(privateKey, field);
  // OpenSSL clamps the scalar on use, exactly as wg does, so unclamped keys derive the same.
  const der = Buffer.concat([PKCS8_X25519_PREFIX, Buffer.from(privateKey, "base64")]);
  const key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  const spki = createPublicKey(key).export({ format: "der", type: "spki" });
  return spki.subarray(SPKI_X25519_PREFIX.length).toString("base64");
}

/** A fresh key pair, in the format of `wg genkey | tee priv | wg pubkey`. */
export function generateWireguardKeyPair(): WireguardKeyPairValue {
  const { privateKey, publicKey } = generateKeyPairSync("x25519");
  const priv = privateKey.export({ format: "der", type: "pkcs8" }).subarray(PKCS8_X25519_PREFIX.length);
  const pub = publicKey.export({ format: "der", type: "spki" }).subarray(SPKI_X25519_PREFIX.length);
  return { privateKey: priv.toString("base64"), publicKey: pub.toString("base64") };
}

/** True when the private key belongs to the public key. */
export function keysMatch(pair: WireguardKeyPairValue): boolean {
  return keyProblem(pair.publicKey) === undefined && publicKeyFromPrivate(pair.privateKey) === pair.publicKey;
}
