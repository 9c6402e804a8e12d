/** `npm run release`: the release (programs/release/release.ts) written to dist/. */
import * as path from "node:path";
import { Command } from "commander";
import { repoRoot } from "../../host/automation/toolchain";
import { release } from "../release/release";

const program = new Command("release")
  .description(
    "Write the klutch plugin's archives (one per platform), the SDK packages, the bridge image, the Function package and SHA256SUMS to dist/",
  )
  .option("--out <dir>", "where to write them", path.join(repoRoot, "dist"))
  .option(
    "--plugin-download-url <url>",
    "where the SDKs say the plugin is served, when not where the schema says (a mirror of the release host)",
  )
  .action(async (o: { out: string; pluginDownloadUrl?: string }) => {
    await release({
      root: repoRoot,
      outDir: path.resolve(o.out),
      log: (m) => console.log(`[release] ${m}`),
      pluginDownloadURL: o.pluginDownloadUrl,
    });
  });
program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
