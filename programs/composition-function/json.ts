/**
 * Plain JSON objects, as Kubernetes objects arrive in a RunFunctionRequest (the SDK unwraps the
 * protobuf Structs into them) and as they leave in the response.
 */

export type JsonObject = Record<string, unknown>;

/** An object that is neither null nor an array: what a Kubernetes object or one of its maps is. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A copy that shares nothing with the original, so a template's base or an observed value can be
 * patched into desired state without later patches (or the next request) writing through to it.
 */
export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

/**
 * Sets an own property, even one named `__proto__`, which a plain assignment would take as the
 * object's prototype: keys come from field paths and objects of the request.
 */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `overlay` merged into a copy of `target`: objects merge key by key, anything else (arrays
 * included) replaces. The desired composite resource is merged this way, so what earlier
 * pipeline steps asked of it stays unless this function writes the same field.
 */
export function deepMerge(target: JsonObject, overlay: JsonObject): JsonObject {
  const out: JsonObject = deepCopy(target);
  for (const [key, value] of Object.entries(overlay)) {
    const existing = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    setOwn(
      out,
      key,
      isJsonObject(existing) && isJsonObject(value) ? deepMerge(existing, value) : deepCopy(value),
    );
  }
  return out;
}
