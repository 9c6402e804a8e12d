import { isSecretEnvelope } from "../pulumi-secret";
/**
 * What an update's own engine events say about its result: the stack's outputs and the count of
 * resource changes. The Automation API's `Stack.up` asks the CLI for the same facts after every
 * update, with three more CLI runs (`stack output --json`, the same with `--show-secrets`, and
 * `stack history --page-size 1`; @pulumi/pulumi 3.248 automation/stack.js `up`, its TODO cites
 * pulumi/pulumi#6050). Each run starts the CLI and loads the stack: 1.05 s of a 2.3 s update of a
 * one-resource stack, measured here. The engine already sent them during the update:
 *
 * - the root stack's `resOutputsEvent` carries the stack outputs (sent for `same` steps too);
 * - the `summaryEvent` carries `resourceChanges` and the result (pkg/engine/events.go).
 *
 * Secret outputs arrive masked in events (a secret signature object whose ciphertext is
 * "[secret]"), so a stack with any secret output has no facts here and the caller asks the CLI.
 */

/** The parts of @pulumi/pulumi/automation's EngineEvent read here (lib/ stays free of Pulumi). */
export interface EngineEventFacts {
  resOutputsEvent?: { metadata: { type: string; new?: { outputs?: Record<string, unknown> } } };
  summaryEvent?: { resourceChanges?: Record<string, number>; durationSeconds?: number; result?: string };
}

/** The same shape as the Automation API's OutputMap. */
export type RunOutputs = Record<string, { value: unknown; secret: boolean }>;

export interface RunFacts {
  /** The stack's outputs, unless the events did not carry them all in plain text. */
  outputs?: RunOutputs;
  resourceChanges?: Record<string, number>;
  result?: string;
  durationSeconds?: number;
}

export const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

/** True when a value holds a secret anywhere inside it. */
export function holdsSecret(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  if (isSecretEnvelope(record)) return true;
  return Object.values(record).some(holdsSecret);
}

/** Collects the facts of one update from its engine events, in the order they arrive. */
export class RunFactsCollector {
  private stackOutputs: Record<string, unknown> | undefined;
  private summary: EngineEventFacts["summaryEvent"];

  observe(event: EngineEventFacts): void {
    const outputs = event.resOutputsEvent?.metadata;
    if (outputs?.type === ROOT_STACK_TYPE) this.stackOutputs = outputs.new?.outputs ?? {};
    if (event.summaryEvent) this.summary = event.summaryEvent;
  }

  facts(): RunFacts {
    const outputs = this.stackOutputs;
    const plain = outputs !== undefined && !holdsSecret(outputs);
    return {
      ...(plain
        ? {
            outputs: Object.fromEntries(
              Object.entries(outputs).map(([key, value]) => [key, { value, secret: false }]),
            ),
          }
        : {}),
      ...(this.summary?.resourceChanges ? { resourceChanges: this.summary.resourceChanges } : {}),
      ...(this.summary?.result ? { result: this.summary.result } : {}),
      ...(this.summary?.durationSeconds !== undefined
        ? { durationSeconds: this.summary.durationSeconds }
        : {}),
    };
  }
}
