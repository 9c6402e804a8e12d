/**
 * Pulumi's wire form of a secret value, in state, engine events and a provider's inputs: an
 * object whose key SECRET_SIG holds SECRET_MARKER (@pulumi/pulumi sdk/nodejs/runtime/rpc.ts
 * specialSigKey and specialSecretSig). Pure.
 */
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
export const SECRET_MARKER = "1b47061264138c4ac30d75fd1eb44270";

/** Whether a value is a secret in Pulumi's wire form. */
export function isSecretEnvelope(v: unknown): v is { value?: unknown; plaintext?: string } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_MARKER;
}
