import { z } from "zod";

/** One problem with the stack's configuration, named by its full config path. */
export interface ConfigIssue {
  /** e.g. `klutch:appClusters[1].networkConnector.implementation` */
  path: string;
  message: string;
}

/** Renders a zod path under the `klutch:` namespace: ["appClusters", 1, "name"] → klutch:appClusters[1].name */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = "klutch";
  path.forEach((segment, i) => {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += i === 0 ? `:${segment}` : `.${segment}`;
  });
  return out;
}

const show = (value: unknown): string => {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** zod 3's names of a value's type, which the messages below were written with ("float": an int check). */
function typeName(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isNaN(value) ? "nan" : "number";
  return typeof value;
}

type Issue = z.core.$ZodRawIssue;

/**
 * Messages that say what is allowed, not just what is wrong. Zod's defaults ("Invalid option")
 * leave the operator guessing; these name the accepted values and echo what was given. Codes
 * not named here keep the wording of zod 3 (zod3Message), which the messages were made with.
 */
export const errorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return `is required (${expectedName(issue.expected)})`;
      const isFraction = issue.expected === "int" && typeof issue.input === "number";
      return `must be ${expectedNoun(expectedName(issue.expected))} (got ${isFraction ? "a fraction" : typeName(issue.input)})`;
    }
    case "invalid_value":
      if (isLiteral(issue)) return `must be ${show(issue.values[0])} (got ${show(issue.input)})`;
      // zod 3 called a z.enum given no string a type error, naming the values as the type.
      if (typeof issue.input !== "string") {
        if (issue.input === undefined) return `is required (${enumType(issue.values)})`;
        return `must be ${expectedNoun(enumType(issue.values))} (got ${typeName(issue.input)})`;
      }
      return `must be one of ${issue.values.map(String).join(", ")} (got ${show(issue.input)})`;
    case "invalid_union":
      // A discriminated union's discriminator: the issue sits on that field, its input is the whole object.
      if (issue.discriminator !== undefined && Array.isArray(issue.options)) {
        const data = issue.input;
        const given: unknown =
          data && typeof data === "object" ? (data as Record<string, unknown>)[issue.discriminator] : data;
        return `must be one of ${(issue.options as unknown[]).map(String).join(", ")} (got ${show(given)})`;
      }
      break;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}; check the spelling against the settings declared in Pulumi.yaml`;
    case "too_small":
      if (issue.origin === "number" || issue.origin === "int")
        return `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)} (got ${show(issue.input)})`;
      if (issue.origin === "array") return `must have at least ${String(issue.minimum)} item(s)`;
      if (issue.origin === "string") return "must not be empty";
      break;
    case "too_big":
      if (issue.origin === "number" || issue.origin === "int")
        return `must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)} (got ${show(issue.input)})`;
      break;
    case "invalid_format":
      if (issue.format === "url") return `must be a URL (got ${show(issue.input)})`;
      if (issue.format === "regex") return `${zod3Message(issue)} (got ${show(issue.input)})`;
      break;
    default:
      break;
  }
  return zod3Message(issue);
};

/** z.literal's issue: zod 4 gives it the code of z.enum's. */
function isLiteral(issue: Issue): boolean {
  const def = issue.inst?._zod.def;
  return def !== undefined && "type" in def && def.type === "literal";
}

/** zod 4 calls an integer "int" and a record "record"; zod 3, whose words the messages keep, "integer" and "object". */
function expectedName(expected: string): string {
  if (expected === "int") return "integer";
  return expected === "record" ? "object" : expected;
}

/** An enum's values as zod 3 named them as a type: 'a' | 'b'. */
function enumType(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(" | ");
}

/**
 * zod 3's own message for an issue (its default error map), so what no rule here words reads as
 * it did before zod 4 and the places that parse without errorMap (the bridge's settings) too.
 */
export function zod3Message(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "Required";
      return `Expected ${expectedName(issue.expected)}, received ${issue.expected === "int" && typeof issue.input === "number" ? "float" : typeName(issue.input)}`;
    case "invalid_value":
      if (isLiteral(issue)) return `Invalid literal value, expected ${JSON.stringify(issue.values[0])}`;
      if (issue.input === undefined) return "Required";
      if (typeof issue.input !== "string")
        return `Expected ${enumType(issue.values)}, received ${typeName(issue.input)}`;
      return `Invalid enum value. Expected ${issue.values.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(" | ")}, received ${typeof issue.input === "string" ? `'${issue.input}'` : String(issue.input)}`;
    case "invalid_union":
      if (issue.discriminator !== undefined && Array.isArray(issue.options))
        return `Invalid discriminator value. Expected ${(issue.options as unknown[]).map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(" | ")}`;
      return "Invalid input";
    case "unrecognized_keys":
      return `Unrecognized key(s) in object: ${issue.keys.map((k) => `'${k}'`).join(", ")}`;
    case "invalid_format":
      if (issue.format === "regex") return "Invalid";
      if (issue.format === "ipv4" || issue.format === "ipv6") return "Invalid ip";
      if (issue.format === "starts_with") return `Invalid input: must start with "${String(issue.prefix)}"`;
      if (issue.format === "ends_with") return `Invalid input: must end with "${String(issue.suffix)}"`;
      if (issue.format === "includes") return `Invalid input: must include "${String(issue.includes)}"`;
      return `Invalid ${issue.format}`;
    case "too_small":
      return tooSmall(issue);
    case "too_big":
      return tooBig(issue);
    case "not_multiple_of":
      return `Number must be a multiple of ${String(issue.divisor)}`;
    case "invalid_key":
    case "invalid_element":
      return "Invalid input";
    default:
      return "Invalid input";
  }
}

function tooSmall(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall>): string {
  const n = String(issue.minimum);
  if (issue.origin === "array")
    return `Array must contain ${issue.exact ? "exactly" : issue.inclusive ? "at least" : "more than"} ${n} element(s)`;
  if (issue.origin === "string")
    return `String must contain ${issue.exact ? "exactly" : issue.inclusive ? "at least" : "over"} ${n} character(s)`;
  if (issue.origin === "number" || issue.origin === "int")
    return `Number must be ${issue.exact ? "exactly equal to " : issue.inclusive ? "greater than or equal to " : "greater than "}${n}`;
  return "Invalid input";
}

function tooBig(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooBig>): string {
  const n = String(issue.maximum);
  if (issue.origin === "array")
    return `Array must contain ${issue.exact ? "exactly" : issue.inclusive ? "at most" : "less than"} ${n} element(s)`;
  if (issue.origin === "string")
    return `String must contain ${issue.exact ? "exactly" : issue.inclusive ? "at most" : "under"} ${n} character(s)`;
  if (issue.origin === "number" || issue.origin === "int")
    return `Number must be ${issue.exact ? "exactly" : issue.inclusive ? "less than or equal to" : "less than"} ${n}`;
  return "Invalid input";
}

/**
 * Issues with their paths. A check that carries its own message (a pattern or a refinement such
 * as "must use https://") bypasses the error map above, so the value given is added here from
 * `input` (never secret: secret settings are validated apart), as the other messages do.
 */
export function zodIssues(error: z.ZodError, input?: unknown): ConfigIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path as (string | number)[];
    const given = valueAt(input, path);
    const echo =
      input !== undefined &&
      !issue.message.includes("(got ") &&
      (typeof given === "string" || typeof given === "number");
    return {
      path: formatPath(path),
      message: echo ? `${issue.message} (got ${show(given)})` : issue.message,
    };
  });
}

function valueAt(input: unknown, at: (string | number)[]): unknown {
  let node = input;
  for (const key of at) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** One message for every problem, naming each field and what to do. */
export class ConfigValidationError extends Error {
  constructor(
    public readonly issues: ConfigIssue[],
    stack: string,
  ) {
    super(renderIssues(issues, stack));
    this.name = "ConfigValidationError";
  }
}

export function renderIssues(issues: ConfigIssue[], stack: string): string {
  const lines = issues.map((i) => `  - ${i.path}: ${i.message}`);
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  return [
    `Invalid configuration for stack "${stack}" (${count}):`,
    ...lines,
    `Fix these in stacks/Pulumi.${stack}.yaml (or with \`pulumi config set --path\`) and run again; nothing was created or changed.`,
  ].join("\n");
}

/** "a list", "a whole number", "an object": zod's type names as a sentence needs them. */
function expectedNoun(expected: string): string {
  if (expected === "array") return "a list";
  if (expected === "integer") return "a whole number";
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
