import type { OutputMap, Stack, UpOptions } from "@pulumi/pulumi/automation";
import { RunFactsCollector } from "../../lib/bridge/run-facts";

/** What the bridge reads of an update. */
export interface EngineRunResult {
  outputs: OutputMap;
  resourceChanges: Record<string, number>;
  /** The CLI's stderr (programs/bridge/stack-locks.ts afterRun reads it). */
  stderr: string;
}

/**
 * `stack.up` without the CLI runs the Automation API makes after every update to read the
 * outputs and the summary back (lib/bridge/run-facts.ts says which and what they cost): for the
 * length of this update, the stack's `outputs` and `info` answer from the update's own engine
 * events. Where the events do not carry a fact (a secret output, no summary), the Automation
 * API's own method runs, so the outputs are the same as `stack.up`'s either way; the e2e
 * test/e2e/engine-run.test.ts checks both against the real engine.
 *
 * The overrides are own properties of this one Stack object and are removed when the update
 * ends; the bridge runs one update per group's Stack at a time (programs/bridge/workqueue.ts).
 */
export async function upFromEvents(stack: Stack, opts: UpOptions): Promise<EngineRunResult> {
  const collector = new RunFactsCollector();
  const fallbackOutputs = stack.outputs.bind(stack);
  const fallbackInfo = stack.info.bind(stack);
  stack.outputs = async () => collector.facts().outputs ?? fallbackOutputs();
  // The summary's resource changes come from the events; only without them is history read.
  stack.info = async (showSecrets?: boolean) =>
    collector.facts().resourceChanges ? undefined : fallbackInfo(showSecrets);
  try {
    const result = await stack.up({
      ...opts,
      onEvent: (event) => {
        collector.observe(event);
        opts.onEvent?.(event);
      },
    });
    return {
      outputs: result.outputs,
      resourceChanges: collector.facts().resourceChanges ?? result.summary?.resourceChanges ?? {},
      stderr: result.stderr,
    };
  } finally {
    // Back to the prototype's methods.
    Reflect.deleteProperty(stack, "outputs");
    Reflect.deleteProperty(stack, "info");
  }
}
