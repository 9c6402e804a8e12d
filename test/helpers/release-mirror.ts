import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/**
 * A release mirror for the toolchain's tests (host/scripts/toolchain-mirror.sh): files kept under
 * their official URL without "https://", served on loopback, with checksums files in the shapes
 * upstreams publish.
 */
export const sha256 = (file: string): string =>
  createHash("sha256").update(fs.readFileSync(file)).digest("hex");

export interface Mirror {
  url: string;
  /** The paths asked for, relative to the mirror's root. */
  asked: string[];
  close: () => void;
}

/** Serves <root> on a loopback port: a file as it is, anything else 404. */
export async function serveMirror(root: string): Promise<Mirror> {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    asked.push(path.relative(root, file));
    if (!file.startsWith(root) || !fs.existsSync(file)) return void res.writeHead(404).end("Not Found");
    res.writeHead(200);
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, asked, close: () => server.close() };
}

/**
 * A .tar.gz of <from> as <member> (a path inside the archive) in <dir>, and a list of
 * "<sum>  <name>" lines, as SHA256SUMS and *checksums.txt are, written to <sums> beside it.
 */
export function addArchive(dir: string, name: string, member: string, from: string, sums: string): void {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-archive-"));
  fs.mkdirSync(path.join(stage, path.dirname(member)), { recursive: true });
  fs.symlinkSync(from, path.join(stage, member));
  fs.mkdirSync(dir, { recursive: true });
  // gzip -1: the archive of a 120 MB CLI in a second or two; the level changes nothing checked.
  const top = member.split("/")[0]!;
  execFileSync("bash", [
    "-c",
    'cd "$1" && tar -chf - "$2" | gzip -1 >"$3"',
    "_",
    stage,
    top,
    path.join(dir, name),
  ]);
  fs.rmSync(stage, { recursive: true, force: true });
  fs.writeFileSync(
    path.join(dir, sums),
    `${"0".repeat(64)}  other.zip\n${sha256(path.join(dir, name))}  ${name}\n`,
  );
}

/** <from> as the bare binary <dir>/<name>, with <name>.sha256 holding its bare sum. */
export function addBinary(dir: string, name: string, from: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.symlinkSync(from, path.join(dir, name));
  fs.writeFileSync(path.join(dir, `${name}.sha256`), sha256(from));
}

/** A folder whose `go` fails at once: a build started by mistake ends in a second, not minutes. */
export function failingGo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-fake-"));
  fs.writeFileSync(path.join(dir, "go"), '#!/bin/sh\necho "no go here: go $*" >&2\nexit 1\n', {
    mode: 0o755,
  });
  return dir;
}
