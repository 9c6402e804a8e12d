import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * A golden-file check for one folder: the rendered text must equal the file's. A missing file
 * is written and the test fails once, so a new golden is always looked at; UPDATE_GOLDEN=1
 * rewrites them all after a deliberate change.
 */
export function goldenChecker(dir: string): (file: string, actual: string) => void {
  const update = process.env.UPDATE_GOLDEN === "1";
  return (file, actual) => {
    const target = path.join(dir, file);
    if (update || !fs.existsSync(target)) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(target, actual);
      if (!update) assert.fail(`wrote missing golden file ${file}; check it and run again`);
    }
    assert.equal(
      actual,
      fs.readFileSync(target, "utf8"),
      `differs from ${file} (UPDATE_GOLDEN=1 rewrites goldens)`,
    );
  };
}
