/**
 * Sets variables of this process's environment for one test file and returns what puts them
 * back. The e2e files used to restore by `process.env = copy`, which makes process.env a plain
 * object: Node.js then gives a child spawned without `env` the process's real environment, not
 * that object (seen with Node.js 26.12: `process.env = {...process.env}; process.env.X = "1"`,
 * and a spawned child has no X). Mocha's parallel workers run files one after another in one
 * process, so every file after such a restore lost what it set for its children: in the CI run
 * of 2026-12-03, bindings.test.ts's `npm run pulumi` child was refused for want of the passphrase
 * its file had set. So process.env itself is never replaced, and a late restore puts a variable
 * back only while it still holds the value this file gave it.
 */
export function setFileEnv(vars: Record<string, string>): () => void {
  const before = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries(vars)) {
    before.set(key, process.env[key]);
    process.env[key] = value;
  }
  return () => {
    for (const [key, prior] of before) {
      if (process.env[key] !== vars[key]) continue;
      if (prior === undefined) delete process.env[key];
      else process.env[key] = prior;
    }
  };
}
