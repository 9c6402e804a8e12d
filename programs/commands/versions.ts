import { Command } from "commander";
import { versionsMarkdown, versionsReport } from "../../host/toolchain/versions-table";

/**
 * `npm run versions`: every pinned part, its upstream support window and whether it is past its
 * end today (docs/versions.md holds the same table with its sources). `--markdown` prints the
 * docs' table; `--fail-past-end` exits 1 when a part is past its end, for a scheduled check.
 */
const program = new Command("versions")
  .description("every pinned part and how long upstream supports it")
  .option("--markdown", "print the table of docs/versions.md")
  .option("--fail-past-end", "exit 1 when any part is past its upstream end of support")
  .option("--today <date>", "judge as on this day (YYYY-MM-DD)", new Date().toISOString().slice(0, 10))
  .parse();

const o = program.opts<{ markdown?: boolean; failPastEnd?: boolean; today: string }>();
if (o.markdown) {
  console.log(versionsMarkdown());
} else {
  const { text, pastEnd } = versionsReport(o.today);
  console.log(text);
  console.log(
    pastEnd === 0
      ? "\nevery part is supported"
      : `\n${pastEnd} part(s) past their end: docs/versions.md says how to move each`,
  );
  if (o.failPastEnd && pastEnd > 0) process.exitCode = 1;
}
