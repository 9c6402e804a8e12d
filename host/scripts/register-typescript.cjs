// Runs this project's TypeScript on Node.js: `node --require ./scripts/register-typescript.cjs x.ts`.
// The project's modules are CommonJS and load each other with require(); an import() stays Node.js's
// own (for packages that are ES modules only, such as dependency-cruiser), so it finds no .ts file.
// Every entry point loads it: the npm scripts (host/scripts/node.sh ts), the Pulumi program
// (Pulumi.yaml nodeargs), the klutch plugin's launcher, mocha (.mocharc.json) and the processes the
// tests start. Types are checked by `npm run build`; here each .ts file is only transpiled by
// esbuild, with the options tsx used before (so a dynamic provider's serialised code, which Pulumi
// keeps in the state, is the same text): CommonJS, names kept, whitespace minified, a source map
// inline.
//
// Why not tsx itself: tsx hooks every file Node.js loads, its dependencies' too, and reads and lexes
// each one for ES module syntax. Loading the program (programs/stack/program.ts) takes 0.48 times the CPU through
// this hook (medians of five runs in turn: 1.86 against 3.40 CPU-s, 2026-11-29), in every process
// that loads it: each `npm run pulumi`, each engine run of index.ts, each bridge.
// `npm run bench:loader` compares it with loading only the program's packages. Files under
// node_modules are left to Node.js here, which loads an ES module package from require() itself
// (Node.js 22.12+) and keeps their compiled code in its compile cache (NODE_COMPILE_CACHE,
// host/scripts/node.sh).
"use strict";
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");

/** @type {import("esbuild").TransformOptions} */
const OPTIONS = {
  loader: "ts",
  format: "cjs",
  platform: "node",
  // A module's code is strict, as TypeScript's own CommonJS output says; esbuild does not say it.
  banner: '"use strict";',
  target: `node${process.versions.node}`,
  sourcemap: "inline",
  minifyWhitespace: true,
  keepNames: true,
};

// Each file's JavaScript is kept by the hash of its path, its text, esbuild's version and the
// options, so a process whose files are all known never starts esbuild: its service (a Go process
// and a worker thread to talk to it) cost each process about 0.5 CPU-s (149 of them in one CI run,
// 2026-11-29). Entries are written whole (a temporary file renamed), so processes at once share it.
const CACHE_DIR =
  process.env.KLUTCH_TYPESCRIPT_CACHE ?? path.join(os.tmpdir(), `klutch-typescript-${os.userInfo().uid}`);
const ESBUILD_VERSION = /** @type {{ version: string }} */ (require("esbuild/package.json")).version;
const KEY_PREFIX = `${ESBUILD_VERSION}\0${JSON.stringify(OPTIONS)}\0`;

/** @param {string} source @param {string} file */
function transpiled(source, file) {
  const key = createHash("sha256").update(`${KEY_PREFIX}${file}\0${source}`).digest("hex");
  const cached = path.join(CACHE_DIR, key.slice(0, 2), `${key}.js`);
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    // Not there yet: transpile and keep it.
  }
  const { transformSync } = /** @type {typeof import("esbuild")} */ (require("esbuild"));
  const { code } = transformSync(source, { ...OPTIONS, sourcefile: file });
  try {
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // A cache that cannot be written only costs the next process the transpiling.
  }
  return code;
}

/** @param {NodeJS.Module & { _compile(code: string, file: string): void }} module @param {string} file */
function compileTypeScript(module, file) {
  module._compile(transpiled(fs.readFileSync(file, "utf8"), file), file);
}

// require() of an extensionless path tries each registered extension in turn, so `./program`
// finds program.ts and `./network` network/index.ts, as TypeScript resolves them.
/** @type {Record<string, unknown>} */ (Module._extensions)[".ts"] = compileTypeScript;

// Where resolving a request of one of the project's .ts files fails, it is tried once more as
// TypeScript would resolve it (Node.js's module customization hooks, which require() runs too):
// - an ES module package's TypeScript names its siblings `./compose.js` (programs/composition-function/, which
//   runs as ES modules in its image): compose.ts when no compose.js exists;
// - a package that exports only to `import` (the function SDK) resolves as an import would, and
//   Node.js loads that ES module for the require().
Module.registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (e) {
      if (!context.parentURL?.endsWith(".ts")) throw e;
      if (/^\.\.?\/.*\.js$/.test(specifier)) return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
      if (/** @type {{ code?: string }} */ (e).code === "ERR_PACKAGE_PATH_NOT_EXPORTED")
        return nextResolve(specifier, { ...context, conditions: [...context.conditions, "import"] });
      throw e;
    }
  },
});
// Stack traces name the .ts file and line; node_modules keep their compiled frames (mapping every
// dependency's source maps costs each process its parse).
Module.setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
