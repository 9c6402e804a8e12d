/**
 * A mocha root-hook plugin for the slow groups (host/scripts/test.sh loads it with --require): it
 * prints how long each test file took, as `[file-time] <file> <seconds>`, so the order and
 * spread of the parallel e2e run can be planned from figures. In parallel mode root hooks run
 * once per file, in the worker that runs it.
 */
import * as path from "node:path";
import type { Context } from "mocha";

let started = 0;

export const mochaHooks = {
  beforeAll(): void {
    started = Date.now();
  },
  afterAll(this: Context): void {
    const file = this.test?.parent?.suites.find((s) => s.file)?.file;
    if (!file) return;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`[file-time] ${path.relative(path.resolve(__dirname, "..", ".."), file)} ${seconds}s`);
  },
};
