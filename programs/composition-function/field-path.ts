/**
 * Crossplane's field paths (crossplane-runtime pkg/fieldpath), the subset patches use: fields
 * separated by dots, keys in brackets (where dots are part of the key, as in label and annotation
 * names), quoted keys in brackets, and array indexes in brackets.
 *
 *   metadata.name
 *   metadata.labels[crossplane.io/claim-namespace]
 *   metadata.annotations["crossplane.io/external-name"]
 *   spec.items[0].name
 *
 * Pure: parsing, reading and writing plain JSON objects, nothing else.
 */
import { isJsonObject, setOwn, type JsonObject } from "./json.js";

/** One step of a field path: a key of an object, or an index into an array. */
export type Segment = { kind: "field"; name: string } | { kind: "index"; index: number };

/** A malformed path, or a path that runs into a value of the wrong type (a string where it needs an object). */
export class FieldPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FieldPathError";
  }
}

/** What a path reads: the value, or that there is none. */
export type Lookup = { found: true; value: unknown } | { found: false };

/**
 * Crossplane reads a bracketed run of digits as an index when it fits an unsigned 32-bit
 * integer, and as a key otherwise; so do we.
 */
const MAX_INDEX = 2 ** 32 - 1;

const QUOTES = new Set(['"', "'"]);

/** The segments of `path`; throws a FieldPathError naming the position of the first mistake. */
export function parseFieldPath(path: string): Segment[] {
  const fail = (pos: number, what: string): never => {
    throw new FieldPathError(`invalid field path ${JSON.stringify(path)}: ${what} at position ${pos}`);
  };
  if (path === "") throw new FieldPathError("invalid field path: it is empty");

  const segments: Segment[] = [];
  let pos = 0;
  // A field name is expected at the start and after every period; a bracket may open the path
  // (Crossplane's `[42]`) or follow a segment directly.
  let expectField = true;
  while (pos < path.length) {
    const char = path[pos]!;
    if (char === "[") {
      const close = path.indexOf("]", pos + 1);
      if (close < 0) fail(pos, 'unterminated "["');
      const inner = path.slice(pos + 1, close);
      if (inner === "") fail(pos + 1, 'empty brackets "[]"');
      if (inner.includes("[")) fail(pos + 1 + inner.indexOf("["), 'unexpected "["');
      segments.push(bracketSegment(inner, (what) => fail(pos + 1, what)));
      pos = close + 1;
      // After a bracket comes the end, a period or another bracket: `a[b]c` is a mistake.
      if (pos < path.length && path[pos] !== "." && path[pos] !== "[")
        fail(pos, `unexpected ${JSON.stringify(path[pos])} after "]"; use "." or "["`);
      expectField = false;
      continue;
    }
    if (char === ".") {
      if (expectField || pos === path.length - 1) fail(pos, 'unexpected "."');
      pos++;
      if (path[pos] === "[") fail(pos, 'unexpected "[" after "."');
      expectField = true;
      continue;
    }
    if (char === "]") fail(pos, 'unexpected "]"');
    // A field name runs to the next period or bracket.
    let end = pos;
    while (end < path.length && !".[]".includes(path[end]!)) end++;
    const name = path.slice(pos, end);
    if (!expectField) fail(pos, `unexpected ${JSON.stringify(name)}; use "." before a field name`);
    if (name === "*") fail(pos, 'wildcards ("*") are not supported');
    segments.push({ kind: "field", name });
    pos = end;
    expectField = false;
  }
  return segments;
}

/** A bracket's content: a quoted key, an index, or an unquoted key (dots and slashes included). */
function bracketSegment(inner: string, fail: (what: string) => never): Segment {
  const first = inner[0]!;
  if (QUOTES.has(first)) {
    if (inner.length < 2 || inner[inner.length - 1] !== first) fail(`unbalanced quote in [${inner}]`);
    const name = inner.slice(1, -1);
    if (name === "") fail("empty quoted key");
    if (name.includes(first)) fail(`quote ${first} inside quoted key [${inner}]`);
    return { kind: "field", name };
  }
  if (/^\d+$/.test(inner) && Number(inner) <= MAX_INDEX) return { kind: "index", index: Number(inner) };
  if (inner === "*") fail('wildcards ("*") are not supported');
  return { kind: "field", name: inner };
}

/** The path of `segments`, written the way Crossplane prints it, for messages. */
export function formatFieldPath(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) {
    if (s.kind === "index") out += `[${s.index}]`;
    else if (/^[^.[\]]+$/.test(s.name)) out += out === "" ? s.name : `.${s.name}`;
    else out += `[${s.name}]`;
  }
  return out;
}

/**
 * The value at `path` in `object`. A missing field, an index past the end and a null all read
 * as not found (Kubernetes stores no nulls, so a null is a field nobody set). A path that runs
 * into a value of the wrong type (an index into an object, a field of a string) is a
 * FieldPathError, as in Crossplane, where it fails the patch rather than skipping it.
 */
export function getFieldPath(object: JsonObject, path: string): Lookup {
  const segments = parseFieldPath(path);
  let current: unknown = object;
  for (const [i, s] of segments.entries()) {
    if (current === null || current === undefined) return { found: false };
    if (s.kind === "index") {
      if (!Array.isArray(current))
        throw new FieldPathError(`${formatFieldPath(segments.slice(0, i)) || "the object"}: not an array`);
      current = (current as unknown[])[s.index];
    } else {
      if (!isJsonObject(current))
        throw new FieldPathError(`${formatFieldPath(segments.slice(0, i)) || "the object"}: not an object`);
      current = Object.prototype.hasOwnProperty.call(current, s.name) ? current[s.name] : undefined;
    }
  }
  return current === null || current === undefined ? { found: false } : { found: true, value: current };
}

/**
 * Writes `value` at `path` in `object`, creating what is missing on the way: an object for a
 * field, an array for an index (padded with nulls up to it, as Crossplane does). A value of the
 * wrong type on the way is a FieldPathError; nothing is replaced to make room.
 */
export function setFieldPath(object: JsonObject, path: string, value: unknown): void {
  const segments = parseFieldPath(path);
  const first = segments[0]!;
  if (first.kind === "index") throw new FieldPathError(`${path}: the object is not an array`);
  let container: JsonObject | unknown[] = object;
  for (const [i, s] of segments.entries()) {
    const next = segments[i + 1];
    const here = formatFieldPath(segments.slice(0, i)) || "the object";
    if (s.kind === "index") {
      if (!Array.isArray(container)) throw new FieldPathError(`${here}: not an array`);
      while (container.length <= s.index) container.push(null);
      if (!next) {
        container[s.index] = value;
        return;
      }
      container = childContainer(container, s.index, next, segments, i);
    } else {
      if (!isJsonObject(container)) throw new FieldPathError(`${here}: not an object`);
      if (!next) {
        setOwn(container, s.name, value);
        return;
      }
      container = childContainer(container, s.name, next, segments, i);
    }
  }
}

/** The object or array at `parent[key]`, created for the `next` segment when missing or null. */
function childContainer(
  parent: JsonObject | unknown[],
  key: string | number,
  next: Segment,
  segments: readonly Segment[],
  i: number,
): JsonObject | unknown[] {
  const existing = Array.isArray(parent)
    ? parent[key as number]
    : Object.prototype.hasOwnProperty.call(parent, key)
      ? parent[key as string]
      : undefined;
  if (existing === null || existing === undefined) {
    const created: JsonObject | unknown[] = next.kind === "index" ? [] : {};
    if (Array.isArray(parent)) parent[key as number] = created;
    else setOwn(parent, key as string, created);
    return created;
  }
  const here = formatFieldPath(segments.slice(0, i + 1));
  if (next.kind === "index" && !Array.isArray(existing)) throw new FieldPathError(`${here}: not an array`);
  if (next.kind === "field" && !isJsonObject(existing)) throw new FieldPathError(`${here}: not an object`);
  return existing as JsonObject | unknown[];
}
