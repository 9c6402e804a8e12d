/**
 * What to print when a command fails. A failed engine run (the Automation API's CommandError)
 * carries the whole run's stdout again in its message (`code: … stdout: … err?: …`), which was
 * streamed already, diagnostics included: repeating it printed every configuration problem a
 * second and third time. Only what was not shown is printed: the engine's stderr, and one line.
 */
export function failureText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const result = (err as { commandResult?: { stderr?: string } }).commandResult;
  if (err.name !== "CommandError" || !result) return err.message;
  const stderr = (result.stderr ?? "").trim();
  return `${stderr ? `${stderr}\n` : ""}the engine run failed; its diagnostics are above.`;
}
