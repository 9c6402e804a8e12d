/** The SDK consumers of test/e2e/provider-sdks.test.ts: what their programs get and report. */

export type Language = "go" | "python" | "nodejs";

/** What every language's program gets (test/sdk/go/main.go params, consumer.py, program.ts Params). */
export interface SdkParams {
  stackName: string;
  workDir: string;
  clusterName: string;
  kubeconfigPath: string;
  namespace: string;
  postgresPort: number;
  portRange: { from: number; to: number };
  stateDir: string;
}

/** What each program reports after `up`: outputs (secret ones without their value) and the change counts. */
export interface UpReport {
  outputs: Record<string, { secret: boolean; value?: unknown }>;
  changes: Record<string, number>;
  /** The engine's progress display of the `up`, with the diff of every resource's inputs. */
  progress: string;
}

export interface Consumer {
  up(p: SdkParams): Promise<UpReport>;
  destroy(p: SdkParams): Promise<void>;
  /** A preview with these variables besides the file's (the Python and Node.js programs). */
  preview?: (p: SdkParams, extra: NodeJS.ProcessEnv) => Promise<{ changes: Record<string, number> }>;
}
