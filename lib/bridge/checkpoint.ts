/**
 * Recovery from an unreadable stack checkpoint of the Pulumi file ("diy") backend. Pure: the
 * rules only; programs/bridge/checkpoint.ts reads and writes the files.
 *
 * Where the file backend of Pulumi 3.248 keeps a stack (pkg/backend/diy/store.go, state.go
 * and backend.go at tag v3.248.0):
 * - the checkpoint: `<root>/.pulumi/stacks/<project>/<stack>.json` (project layout, the
 *   default for a new backend; `.json.gz`/`.json.zst` only when compression is turned on,
 *   which the bridge never does);
 * - `<stack>.json.bak`: a copy of the previous checkpoint, made by `backupTarget` before
 *   every write of the checkpoint (so it lags one write behind); `stack rm` also moves the
 *   checkpoint there, which is why a `.bak` without a `.json` means "removed", not "lost";
 * - `<root>/.pulumi/backups/<project>/<stack>/<stack>.<unix-nanos>.json`: a copy written by
 *   `backupStack` after every completed update (unless PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS).
 *
 * - next to every file, a `<file>.attrs` sidecar: the metadata (content type, MD5) of the
 *   gocloud.dev `fileblob` driver the backend stores files with. The driver writes it with
 *   `os.Create` + a JSON encoder, not atomically, and decodes it on every read and every
 *   existence check of the file; a missing sidecar is fine (blob/fileblob/attrs.go: getAttrs).
 *
 * What the kill trials hit (`failed to load checkpoint: EOF` at `stack select`, about 1 run in
 * 6): a sidecar left empty by a SIGKILL during that write. Decoding an empty sidecar is
 * Go's `io.EOF`, which the backend's existence check wraps as "failed to load checkpoint";
 * reproduced on demand by emptying `<stack>.json.attrs` (an empty `<stack>.json` itself fails
 * later, at `up`: "failed to load checkpoint: ... unexpected end of JSON input"). Either way
 * every later command on the stack fails, so a group would retry forever. A sidecar that does
 * not parse is removed (only metadata nobody here reads; the driver then assumes defaults).
 * A checkpoint that does not parse is replaced by an older copy. Any of the older copies is better than none: the bridge's providers
 * are idempotent (PortAllocation keeps or re-plans ports, LocalHaproxy takes over its pid
 * file, Kubernetes objects are adopted by name through server-side apply) and the run after
 * a recovery refreshes, so resources the older copy does not know about, or that it thinks
 * still exist, are brought back in line. With no usable copy the stack is created anew.
 */

/** Why a checkpoint file's text is not a checkpoint the backend can load; undefined when it is. */
export function checkpointProblem(text: string): string | undefined {
  if (text.trim() === "") return "the file is empty";
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return `the file is not JSON (${(e as Error).message})`;
  }
  // apitype.VersionedCheckpoint: {version, features?, checkpoint}.
  if (typeof parsed !== "object" || parsed === null) return "the file holds no object";
  const { version, checkpoint } = parsed as { version?: unknown; checkpoint?: unknown };
  if (typeof version !== "number") return "the checkpoint has no version";
  if (typeof checkpoint !== "object" || checkpoint === null) return "the file holds no checkpoint";
  return undefined;
}

/** Whether a fileblob metadata sidecar's text is readable (a JSON object); see above. */
export function sidecarReadable(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** One candidate copy to restore from. */
export interface CheckpointCopy {
  /** Where it is (for the log and the Event). */
  file: string;
  text: string;
}

export type CheckpointRecovery =
  | { action: "none" }
  | { action: "restore"; problem: string; from: string; text: string }
  | { action: "recreate"; problem: string };

/**
 * What to do with a stack's checkpoint before the stack is selected. `current` is the text of
 * `<stack>.json` (undefined when there is none: a new or removed stack, nothing to recover);
 * `copies` are the older copies, best first (the `.bak`, then the backups newest first).
 */
export function planCheckpointRecovery(
  current: string | undefined,
  copies: readonly CheckpointCopy[],
): CheckpointRecovery {
  if (current === undefined) return { action: "none" };
  const problem = checkpointProblem(current);
  if (problem === undefined) return { action: "none" };
  const usable = copies.find((c) => checkpointProblem(c.text) === undefined);
  return usable
    ? { action: "restore", problem, from: usable.file, text: usable.text }
    : { action: "recreate", problem };
}

/**
 * The backups directory's files, newest first: `<stack>.<unix-nanos>.json`, ordered by the
 * number (the names sort wrongly as text once the digit count changes).
 */
export function newestBackupsFirst(stack: string, files: readonly string[]): string[] {
  const stamp = (f: string) => {
    const m = new RegExp(`^${escapeRegExp(stack)}\\.(\\d+)\\.json$`).exec(f);
    return m ? BigInt(m[1] as string) : undefined;
  };
  return files
    .filter((f) => stamp(f) !== undefined)
    .sort((a, b) => {
      const d = (stamp(b) as bigint) - (stamp(a) as bigint);
      return d > 0n ? 1 : d < 0n ? -1 : 0;
    });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * How many pending operations a checkpoint file records (`checkpoint.latest.pending_operations`
 * of apitype.VersionedCheckpoint): an update killed midway leaves some, and the next update
 * refuses to run until they are cleared. Read from the file so the common case (none) costs
 * no `pulumi stack export`; undefined when the text is no checkpoint (the caller then asks the
 * engine).
 */
export function pendingOperationCount(text: string): number | undefined {
  try {
    const parsed = JSON.parse(text) as { checkpoint?: { latest?: { pending_operations?: unknown[] } } };
    if (typeof parsed?.checkpoint !== "object" || parsed.checkpoint === null) return undefined;
    return parsed.checkpoint.latest?.pending_operations?.length ?? 0;
  } catch {
    return undefined;
  }
}
