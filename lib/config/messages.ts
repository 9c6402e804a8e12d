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

/**
 * Messages that say what is allowed, not just what is wrong. Zod's defaults ("Invalid enum
 * value") leave the operator guessing; these name the accepted values and echo what was given.
 */
export const errorMap: z.ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case z.ZodIssueCode.invalid_type:
      if (issue.received === "undefined") return { message: `is required (${issue.expected})` };
      return {
        message: `must be ${expectedNoun(issue.expected)} (got ${issue.received === "float" ? "a fraction" : issue.received})`,
      };
    case z.ZodIssueCode.invalid_enum_value:
      return { message: `must be one of ${issue.options.join(", ")} (got ${show(issue.received)})` };
    case z.ZodIssueCode.invalid_union_discriminator: {
      // The issue sits on the discriminator field, but ctx.data is the whole object.
      const field = issue.path[issue.path.length - 1];
      const data: unknown = ctx.data;
      const given: unknown =
        data && typeof data === "object" && field !== undefined
          ? (data as Record<string | number, unknown>)[field]
          : data;
      return { message: `must be one of ${issue.options.map(String).join(", ")} (got ${show(given)})` };
    }
    case z.ZodIssueCode.invalid_literal:
      return { message: `must be ${show(issue.expected)} (got ${show(ctx.data)})` };
    case z.ZodIssueCode.unrecognized_keys:
      return {
        message: `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}; check the spelling against the settings declared in Pulumi.yaml`,
      };
    case z.ZodIssueCode.too_small:
      if (issue.type === "number") {
        return {
          message: `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)} (got ${show(ctx.data)})`,
        };
      }
      if (issue.type === "array") return { message: `must have at least ${String(issue.minimum)} item(s)` };
      if (issue.type === "string") return { message: "must not be empty" };
      break;
    case z.ZodIssueCode.too_big:
      if (issue.type === "number") {
        return {
          message: `must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)} (got ${show(ctx.data)})`,
        };
      }
      break;
    case z.ZodIssueCode.invalid_string:
      if (issue.validation === "url") return { message: `must be a URL (got ${show(ctx.data)})` };
      if (issue.validation === "regex") return { message: `${ctx.defaultError} (got ${show(ctx.data)})` };
      break;
    default:
      break;
  }
  return { message: ctx.defaultError };
};

/**
 * Issues with their paths. A check that carries its own message (a pattern or a refinement such
 * as "must use https://") bypasses the error map above, so the value given is added here from
 * `input` (never secret: secret settings are validated apart), as the other messages do.
 */
export function zodIssues(error: z.ZodError, input?: unknown): ConfigIssue[] {
  return error.issues.map((issue) => {
    const given = valueAt(input, issue.path);
    const echo =
      input !== undefined &&
      !issue.message.includes("(got ") &&
      (typeof given === "string" || typeof given === "number");
    return {
      path: formatPath(issue.path),
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
