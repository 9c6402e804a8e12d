import * as fs from "node:fs";

/**
 * Writes `content` to a new 0600 file, replacing any old one. Private keys reach wireguard-go
 * only this way (`wg set … private-key <file>`): never argv, an environment or a log.
 */
export function writeSecretFile(file: string, content: string): void {
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, content, { mode: 0o600, flag: "wx" });
}
