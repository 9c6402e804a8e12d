/**
 * The cause of a failed engine run, from the Automation API's engine events rather than the
 * last lines of the CLI's output (which end in "N errored" and name no resource). Pure.
 *
 * The events used (sdk/nodejs/automation/events.ts of @pulumi/pulumi 3.248):
 * - `diagnosticEvent` with severity "error": the message a provider or the program reported,
 *   with the URN of the resource it is about (none for the run as a whole);
 * - `resOpFailedEvent`: which operation (create/update/delete…) failed on which URN and type.
 */

/** The subset of an EngineEvent read here (structurally compatible with the SDK's type). */
export interface EngineEventLike {
  diagnosticEvent?: { urn?: string; message: string; severity: string; prefix?: string };
  resOpFailedEvent?: { metadata: { op: string; urn: string; type: string } };
}

/** One failure of a run: the resource (when known) and what the engine said about it. */
export interface EngineFailure {
  urn?: string;
  type?: string;
  op?: string;
  message: string;
}

/** `urn:pulumi:stack::project::type$parentType::name` → type and name. */
export function urnParts(urn: string): { type: string; name: string } | undefined {
  const parts = urn.split("::");
  if (parts.length < 4) return undefined;
  const types = (parts[2] as string).split("$");
  return { type: types[types.length - 1] as string, name: parts.slice(3).join("::") };
}

// ANSI escapes and the CLI's own colour markup (`<{%reset%}>`), in case colour was not turned off.
// eslint-disable-next-line no-control-regex -- ESC starts every ANSI colour sequence.
const COLOUR = /\x1b\[[0-9;]*m|<\{%[a-z]*%\}>/g;

/**
 * The AWS SDK inside the engine (aws-sdk-go-v2, reached through the s3:// backend) logs through
 * smithy-go's standard logger, "SDK <date> <time> WARN <text>", into the CLI's output and so into
 * every error the engine reports. Against an S3-compatible server that sends no checksum (MinIO,
 * moto) each read adds "WARN Response has no supported checksum. Not validating response
 * payload."; a path's condition would then show client chatter instead of its cause.
 */
const SDK_LOG_LINE = /^\s*SDK \d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} (?:WARN|DEBUG|INFO) .*$/;

/** `text` without the AWS SDK's own log lines, every other line as it was. */
export function withoutSdkLogLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !SDK_LOG_LINE.test(line))
    .join("\n");
}

/** Collects failures from engine events, in the order the engine reported them. */
export class EngineDiagnostics {
  private readonly failures: EngineFailure[] = [];
  private readonly ops = new Map<string, { op: string; type: string }>();

  readonly onEvent = (event: EngineEventLike): void => {
    const failed = event.resOpFailedEvent?.metadata;
    if (failed) {
      this.ops.set(failed.urn, { op: failed.op, type: failed.type });
      return;
    }
    const d = event.diagnosticEvent;
    if (!d || d.severity !== "error") return;
    const message = withoutSdkLogLines(d.message.replace(COLOUR, "")).trim();
    if (message === "") return;
    this.failures.push({ ...(d.urn ? { urn: d.urn } : {}), message });
  };

  /** The failures, each resource's with the failed operation and type; none when the run said nothing. */
  list(): EngineFailure[] {
    return this.failures.map((f) => {
      const op = f.urn ? this.ops.get(f.urn) : undefined;
      return op ? { ...f, op: op.op, type: op.type } : f;
    });
  }

  /**
   * One message for logs and conditions: every resource failure as "type name (op): message",
   * then run-level errors that add something (not the generic "update failed" summary).
   */
  summary(): string | undefined {
    return summarizeFailures(this.list());
  }
}

export function summarizeFailures(failures: readonly EngineFailure[]): string | undefined {
  const lines: string[] = [];
  const seen = new Set<string>();
  const resourceFailures = failures.filter((f) => f.urn);
  for (const f of failures) {
    let line: string;
    if (f.urn) {
      const parts = urnParts(f.urn);
      const what = parts ? `${f.type ?? parts.type} "${parts.name}"` : f.urn;
      line = `${what}${f.op ? ` (${f.op})` : ""}: ${oneLine(f.message)}`;
    } else {
      // The engine closes a failed run with a generic line; it says nothing a resource did not.
      if (resourceFailures.length > 0 && /^update failed$|^preview failed$|^destroy failed$/i.test(f.message))
        continue;
      line = oneLine(f.message);
    }
    if (!seen.has(line)) lines.push(line);
    seen.add(line);
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}

function oneLine(message: string): string {
  return message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
}
