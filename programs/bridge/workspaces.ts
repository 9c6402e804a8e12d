import * as fs from "node:fs";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { stackName } from "../../lib/bridge/grouping";

/** The Pulumi project of every group's stack (the network preview reads its checkpoints too). */
export const PROJECT = "klutch-network-paths";

/**
 * The directory of a `file://` backend, where the bridge reads locks and checkpoints directly;
 * undefined for any other backend, which only the engine may read.
 */
export function fileBackendDir(pulumiEnv: Record<string, string>): string | undefined {
  const backend = pulumiEnv.PULUMI_BACKEND_URL ?? "";
  return backend.startsWith("file://") ? backend.slice("file://".length) : undefined;
}

export interface GroupWorkspacesOptions {
  /** The Automation API's work dir, shared by all groups (programs/bridge/state-dir.ts `workspace`). */
  workDir: string;
  /** Environment for the Pulumi CLI (backend URL, passphrase, PATH). */
  pulumiEnv: Record<string, string>;
  /** Secrets provider of new stacks (e.g. awskms://…); the passphrase provider when unset. */
  secretsProvider?: string;
}

/**
 * One long-lived workspace and Stack per group, created on the group's first run and reused,
 * so a run costs the update alone (the trace measured 1.3–2.5 s per run for
 * `createOrSelectStack` plus `stack export`). A group's Stack is forgotten whenever what the
 * workspace holds may be out of date (a repaired checkpoint, a failed run, a removed stack).
 */
export class GroupWorkspaces {
  private readonly stacks = new Map<string, Stack>();

  constructor(private readonly opts: GroupWorkspacesOptions) {
    fs.mkdirSync(opts.workDir, { recursive: true });
  }

  /** The group's Stack: the one selected before, else created or selected now. */
  async stack(key: string): Promise<Stack> {
    const cached = this.stacks.get(key);
    if (cached) return cached;
    const stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: stackName(key),
        projectName: PROJECT,
        // Each run passes the program of the group's paths at that time (stack.up's `program`).
        program: () => Promise.reject(new Error("no program given for this run")),
      },
      {
        workDir: this.opts.workDir,
        envVars: this.opts.pulumiEnv,
        projectSettings: { name: PROJECT, runtime: "nodejs" },
        ...(this.opts.secretsProvider ? { secretsProvider: this.opts.secretsProvider } : {}),
      },
    );
    this.stacks.set(key, stack);
    return stack;
  }

  /** Removes the group's (destroyed) stack from the backend, and forgets it. */
  async remove(key: string, stack: Stack): Promise<void> {
    await stack.workspace.removeStack(stack.name);
    this.forget(key);
  }

  /** Forgets the group's Stack, so the next run selects it afresh. */
  forget(key: string): void {
    this.stacks.delete(key);
  }
}
