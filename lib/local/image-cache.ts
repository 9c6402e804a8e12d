/**
 * Which image archives the local image cache (~/.cache/klutch-pulumi/images) may drop. Every
 * change to the bridge's sources makes a new ~500 MB bridge archive (its name carries the
 * manifest digest), so without a bound a machine that runs the tests after each commit fills its
 * disk. A new archive of a repository lets the older ones go, all but the newest few: a clone
 * one commit behind, or a second worker still importing the previous one, keeps finding its own.
 */

/** Archives kept per repository, the newest first by modification time. */
export const ARCHIVES_KEPT_PER_REPOSITORY = 3;

/** One archive of the cache: its file name and when it was written. */
export interface CachedArchive {
  file: string;
  mtimeMs: number;
}

// <repository>-<version>-<12 hex of the manifest digest>[.docker].oci.tar; versions start with a digit.
const ARCHIVE = /^(.+?)-\d.*-[0-9a-f]{12}(?:\.docker)?\.oci\.tar$/;

/** The repository an archive's file name belongs to (`bridge`, `function-klutch`), if it is one. */
export function archiveRepository(file: string): string | undefined {
  return ARCHIVE.exec(file)?.[1];
}

/**
 * The archives to delete: for each repository, all but the newest `kept`, never one named in
 * `inUse` (the archive just written or found). Files that are not archives are left alone.
 */
export function archivesToPrune(
  archives: readonly CachedArchive[],
  inUse: readonly string[],
  kept = ARCHIVES_KEPT_PER_REPOSITORY,
): string[] {
  const byRepository = new Map<string, CachedArchive[]>();
  for (const archive of archives) {
    const repository = archiveRepository(archive.file);
    if (repository === undefined) continue;
    byRepository.set(repository, [...(byRepository.get(repository) ?? []), archive]);
  }
  const prune: string[] = [];
  for (const group of byRepository.values()) {
    const newestFirst = [...group].sort((a, b) => b.mtimeMs - a.mtimeMs || a.file.localeCompare(b.file));
    for (const archive of newestFirst.slice(kept))
      if (!inUse.includes(archive.file)) prune.push(archive.file);
  }
  return prune.sort();
}
