/** Structured logs: one JSON object per line on stdout, as log collectors expect. */
export type Logger = (
  level: "debug" | "info" | "warn" | "error",
  msg: string,
  fields?: Record<string, unknown>,
) => void;

export function jsonLogger(
  minLevel: "debug" | "info" = "info",
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  return (level, msg, fields = {}) => {
    if (level === "debug" && minLevel !== "debug") return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
}
