import * as fs from "node:fs";

/**
 * A component's log is appended to across runs; `spawnDetached` opens each run with a
 * `--- <time> starting …` line. These read the latest run only.
 */
export const RUN_SEPARATOR = "\n--- ";

/** The text of the latest run in a component's log (all of it when no run line is found). */
export function latestRun(text: string): string {
  return text.slice(Math.max(0, text.lastIndexOf(RUN_SEPARATOR) + 1));
}

/** The latest run's log, or "" when nothing was written yet. */
export function readLatestRun(file: string): string {
  try {
    return latestRun(fs.readFileSync(file, "utf8"));
  } catch {
    return "";
  }
}

/** The last lines a component wrote in its latest run, indented for an error message. */
export function logTail(file: string, lines = 15): string {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return "    (no log written)";
  }
  return latestRun(text)
    .trimEnd()
    .split("\n")
    .slice(-lines)
    .map((l) => `    ${l}`)
    .join("\n");
}
