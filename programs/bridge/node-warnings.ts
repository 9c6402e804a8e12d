import type { Logger } from "./log";

/**
 * Node.js prints process warnings to stderr as plain text, which breaks the bridge's log of one
 * JSON object per line (programs/bridge/log.ts) for any collector that parses it. On Node.js 26
 * the first engine run printed one each time: Pulumi's closure serializer loads every builtin
 * module to name them (@pulumi/pulumi 3.276.0 runtime/closure/createClosure.js
 * `computeBuiltInModules`), and loading `node:ffi` warns that FFI is experimental, a module the
 * bridge never uses. So warnings are logged as JSON instead, each distinct one once: the known
 * one at debug, any other at warn. Removing the process's `warning` listeners removes Node.js's
 * own printing, which is one such listener (it is not installed under --no-warnings).
 */
const NOT_USED = [/^FFI is an experimental feature/];

export function logNodeWarnings(log: Logger, proc: NodeJS.Process = process): void {
  proc.removeAllListeners("warning");
  const seen = new Set<string>();
  proc.on("warning", (w: Error & { code?: string }) => {
    const key = `${w.name}\0${w.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    const fields = { name: w.name, warning: w.message, ...(w.code ? { code: w.code } : {}) };
    if (NOT_USED.some((re) => re.test(w.message)))
      log("debug", "Node.js warning about a module the bridge does not use", fields);
    else log("warn", "Node.js warning", fields);
  });
}
