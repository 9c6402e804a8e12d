/**
 * Klutch's marked section in someone else's Corefile: where it is, and how it goes in and out
 * without touching a byte of the rest. The section is the lines from a begin marker comment to an
 * end marker comment; only those lines are Klutch's.
 *
 * Appended, it is set off by one blank line, and the file keeps its ending: a Corefile that ended
 * in a newline still does, one that did not still does not (the section then ends the file with
 * no newline after its end marker). Removal reads that back from the file alone, so taking the
 * section out again restores the original exactly, whoever wrote the rest in the meantime.
 */

export const BEGIN_MARKER =
  "# klutch-instance-names: begin (managed by Klutch; edits inside are overwritten)";
export const END_MARKER = "# klutch-instance-names: end";
// Matched by prefix, so a marker whose wording an operator touched is still found.
const BEGIN_PREFIX = "# klutch-instance-names: begin";
const END_PREFIX = "# klutch-instance-names: end";

export interface SectionBounds {
  /** Offset of the begin marker line's first character. */
  start: number;
  /** Offset just after the end marker line's last character (before its newline, if any). */
  end: number;
  /** 1-based lines of the two markers. */
  firstLine: number;
  lastLine: number;
}

/**
 * Where the marked section is, or undefined when there is none. Throws when the markers do not
 * pair up: rather than guess where the section ends and delete someone else's lines.
 */
export function sectionBounds(corefile: string): SectionBounds | undefined {
  const begins: { line: number; start: number }[] = [];
  const ends: { line: number; end: number }[] = [];
  let offset = 0;
  corefile.split("\n").forEach((text, i) => {
    const trimmed = text.trim();
    if (trimmed.startsWith(BEGIN_PREFIX)) begins.push({ line: i + 1, start: offset });
    if (trimmed.startsWith(END_PREFIX)) ends.push({ line: i + 1, end: offset + text.length });
    offset += text.length + 1;
  });
  if (begins.length === 0 && ends.length === 0) return undefined;
  const [begin] = begins;
  const [end] = ends;
  const where = (list: { line: number }[]) => list.map((m) => m.line).join(", ") || "none";
  if (begins.length !== 1 || ends.length !== 1 || begin!.line > end!.line)
    throw new Error(
      `the Corefile's Klutch instance-names markers do not pair up (begin at line ${where(begins)}, end at line ${where(ends)}); ` +
        `Klutch will not guess which lines are its own: edit the Corefile so that exactly one "${BEGIN_PREFIX}" line is followed by ` +
        `one "${END_PREFIX}" line around Klutch's server block, or remove Klutch's lines and markers by hand, then run again`,
    );
  return { start: begin!.start, end: end!.end, firstLine: begin!.line, lastLine: end!.line };
}

/** The Corefile with `section` (marker lines included, no final newline) in place of the marked one, or appended. */
export function putSection(corefile: string, section: string): string {
  const at = sectionBounds(corefile);
  if (at) return corefile.slice(0, at.start) + section + corefile.slice(at.end);
  if (corefile === "") return `${section}\n`;
  return corefile.endsWith("\n") ? `${corefile}\n${section}\n` : `${corefile}\n\n${section}`;
}

/** The Corefile without the marked section and the blank line that set it off, as putSection found it. */
export function dropSection(corefile: string): string {
  const at = sectionBounds(corefile);
  if (!at) return corefile;
  const before = corefile.slice(0, at.start);
  const after = corefile.slice(at.end);
  // The section ended the file without a newline: so did the file before it was appended.
  if (after === "") return before.endsWith("\n\n") ? before.slice(0, -2) : before.replace(/\n$/, "");
  // `after` starts with the end marker's newline; one blank line before the section was ours.
  return (before.endsWith("\n\n") ? before.slice(0, -1) : before) + after.slice(1);
}
