import * as fs from "node:fs";
import * as path from "node:path";
import {
  newestBackupsFirst,
  planCheckpointRecovery,
  sidecarReadable,
  type CheckpointRecovery,
} from "../../lib/bridge/checkpoint";

/** Where the file backend rooted at `root` keeps a stack's checkpoint (see lib/bridge/checkpoint.ts). */
export function checkpointPaths(
  root: string,
  project: string,
  stack: string,
): { file: string; bak: string; backupsDir: string } {
  const projectFile = path.join(root, ".pulumi", "stacks", project, `${stack}.json`);
  // A backend made before Pulumi 3.61 (no .pulumi/meta.yaml) keeps stacks without the project
  // directory; the bridge's own state dirs are always newer, but an operator's may not be. The CLI
  // of 3.276.0 refuses to open such a backend (pkg/backend/diy/backend.go) until `pulumi state
  // upgrade` of 3.274.1 or earlier moved it, so this path only finds its files for that upgrade.
  const legacyFile = path.join(root, ".pulumi", "stacks", `${stack}.json`);
  const file = !fs.existsSync(projectFile) && fs.existsSync(legacyFile) ? legacyFile : projectFile;
  const backupsDir =
    file === projectFile
      ? path.join(root, ".pulumi", "backups", project, stack)
      : path.join(root, ".pulumi", "backups", stack);
  return { file, bak: `${file}.bak`, backupsDir };
}

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Removes the unreadable fileblob metadata sidecars (`*.attrs`) the stack's commands read:
 * the backend's meta.yaml, the checkpoint and its .bak, the backups and the locks. Returns the
 * files removed.
 */
export function repairSidecars(root: string, project: string, stack: string): string[] {
  const { file, bak, backupsDir } = checkpointPaths(root, project, stack);
  const locksDir = path.join(root, ".pulumi", "locks", "organization", project, stack);
  const listed = (dir: string) => {
    try {
      return fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".attrs"))
        .map((f) => path.join(dir, f));
    } catch {
      return [];
    }
  };
  const candidates = [
    path.join(root, ".pulumi", "meta.yaml.attrs"),
    `${file}.attrs`,
    `${bak}.attrs`,
    ...listed(backupsDir),
    ...listed(locksDir),
  ];
  const removed: string[] = [];
  for (const f of candidates) {
    const text = readOrUndefined(f);
    if (text === undefined || sidecarReadable(text)) continue;
    fs.rmSync(f, { force: true });
    removed.push(f);
  }
  return removed;
}

/**
 * Checks a stack's checkpoint in a file backend and repairs it when it does not parse:
 * restores the newest usable older copy, or moves the broken file aside so the stack is
 * created anew. The broken file is kept (`<stack>.json.corrupt-<ms>`) for a post-mortem.
 * Must run while no engine works on the stack (the caller holds the group).
 */
export function recoverCheckpoint(
  root: string,
  project: string,
  stack: string,
): CheckpointRecovery & { sidecars: string[] } {
  const sidecars = repairSidecars(root, project, stack);
  return { ...recoverCheckpointFile(root, project, stack), sidecars };
}

function recoverCheckpointFile(root: string, project: string, stack: string): CheckpointRecovery {
  const { file, bak, backupsDir } = checkpointPaths(root, project, stack);
  const current = readOrUndefined(file);
  if (current === undefined) return { action: "none" };
  // Cheap path first: nearly every reconcile finds a good checkpoint and reads nothing else.
  const quick = planCheckpointRecovery(current, []);
  if (quick.action === "none") return quick;
  let backups: string[] = [];
  try {
    backups = newestBackupsFirst(stack, fs.readdirSync(backupsDir));
  } catch {
    // No backups directory: backups turned off, or no update ever completed.
  }
  const copies = [bak, ...backups.map((b) => path.join(backupsDir, b))].flatMap((f) => {
    const text = readOrUndefined(f);
    return text === undefined ? [] : [{ file: f, text }];
  });
  const plan = planCheckpointRecovery(current, copies);
  const aside = `${file}.corrupt-${Date.now()}`;
  fs.copyFileSync(file, aside);
  if (plan.action === "restore") {
    // Write beside and rename: a kill during the repair leaves either the old or the new file.
    fs.writeFileSync(`${file}.tmp`, plan.text);
    fs.renameSync(`${file}.tmp`, file);
  } else if (plan.action === "recreate") {
    fs.rmSync(file);
    // The blob library's metadata sidecar describes the file just removed.
    fs.rmSync(`${file}.attrs`, { force: true });
  }
  return plan;
}
