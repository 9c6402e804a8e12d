import { isSecretEnvelope, SECRET_MARKER, SECRET_SIG } from "../pulumi-secret";

/**
 * What the klutch plugin does to the properties of the resources it serves itself
 * (programs/klutch-provider/internal-resources.ts) so that their CRUD, written as `pulumi.dynamic` providers,
 * sees exactly what the engine's dynamic-provider host would have given it. Pure.
 *
 * The plugin's server accepts secrets (@pulumi/pulumi provider/server.ts `configure`:
 * acceptSecrets true), so properties arrive with secrets in their wire form. The dynamic host
 * accepts none, so the engine had unwrapped them before and marked the outputs of a secret input
 * secret again (pulumi/pulumi sdk/go/common/resource/plugin/provider_plugin.go, annotateSecrets,
 * called when the provider does not accept secrets). Here the plugin does both: `unwrap` before
 * the provider runs, `rewrap` on what it returns. One difference, on the safe side: where an
 * input and its output are both objects, annotateSecrets recurses and marks only the nested
 * values whose input held a secret; `rewrap` marks the whole top-level property, so a
 * non-secret neighbour of a nested secret is kept encrypted too. No secret is ever left plain.
 */

/** The property that held a dynamic resource's serialized provider; an aliased old state still has it. */
export const DYNAMIC_PROVIDER_KEY = "__provider";

export interface Unwrapped {
  /** The properties with every secret replaced by its value, and no serialized provider. */
  plain: Record<string, unknown>;
  /** The top-level properties that held a secret anywhere inside. */
  secretKeys: Set<string>;
}

function reveal(value: unknown, found: { secret: boolean }): unknown {
  if (isSecretEnvelope(value)) {
    found.secret = true;
    return reveal(value.value, found);
  }
  if (Array.isArray(value)) return value.map((v) => reveal(v, found));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reveal(v, found)]));
  return value;
}

export function unwrap(props: Record<string, unknown> | undefined): Unwrapped {
  const plain: Record<string, unknown> = {};
  const secretKeys = new Set<string>();
  for (const [key, value] of Object.entries(props ?? {})) {
    if (key === DYNAMIC_PROVIDER_KEY) continue;
    const found = { secret: false };
    plain[key] = reveal(value, found);
    if (found.secret) secretKeys.add(key);
  }
  return { plain, secretKeys };
}

/** `props` with each property named in `secretKeys` in the wire form of a secret. */
export function rewrap(
  props: Record<string, unknown> | undefined,
  secretKeys: Set<string>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(props ?? {}).map(([k, v]) => [
      k,
      secretKeys.has(k) && !isSecretEnvelope(v) ? { [SECRET_SIG]: SECRET_MARKER, value: v } : v,
    ]),
  );
}

/** Both sets of secret keys together (an update's old outputs and new inputs). */
export const union = (a: Set<string>, b: Set<string>) => new Set([...a, ...b]);
