import { pinnedVersion, standing, SUPPORT_WINDOWS, type SupportWindow } from "./support-windows";

/**
 * The table `npm run versions` prints and docs/versions.md carries: one row per pinned part. The
 * docs' table leaves out the standing column, which depends on the day it is read.
 */
const pinSource = (w: SupportWindow) =>
  "env" in w.pin ? "versions.env" : "npm" in w.pin ? "package.json" : "lib/config";

const ends = (w: SupportWindow) => w.ends ?? (w.ended ? "ended" : `when ${w.endsWhen ?? "superseded"}`);

function markdownRows(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The docs' table: part, pin, where it is pinned, upstream's policy, its end, how to move it. */
export function versionsMarkdown(root?: string): string {
  return markdownRows(
    ["part", "pinned", "in", "upstream support", "support ends", "how to move it"],
    SUPPORT_WINDOWS.map((w) => [w.part, pinnedVersion(w.pin, root), pinSource(w), w.policy, ends(w), w.move]),
  );
}

/** The terminal's table, with each part's standing on `today`; past ends are marked. */
export function versionsReport(today: string, root?: string): { text: string; pastEnd: number } {
  const rows = SUPPORT_WINDOWS.map((w) => {
    const pinned = pinnedVersion(w.pin, root);
    const s = standing(w, today, pinned);
    return { cells: [w.part, pinned, s.text], past: s.past };
  });
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => (r.cells[i] ?? "").length)));
  const text = rows
    .map(
      (r) =>
        `${r.past ? "✗" : "✓"} ${r.cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c)).join("  ")}`,
    )
    .join("\n");
  return { text, pastEnd: rows.filter((r) => r.past).length };
}
