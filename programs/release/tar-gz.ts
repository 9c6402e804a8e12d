/**
 * Byte-reproducible archives: entries in the order given with one time, owner 0 and fixed modes;
 * gzip with no name and no time. The same inputs give the same bytes on any machine.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import * as tar from "tar-stream";

export interface Entry {
  name: string;
  mode: number;
  body: Buffer;
  type?: "file" | "directory";
}

export async function tarGz(entries: Entry[], mtime: Date): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  for (const e of entries)
    pack.entry(
      { name: e.name, type: e.type ?? "file", mode: e.mode, mtime, uid: 0, gid: 0, uname: "", gname: "" },
      e.type === "directory" ? undefined : e.body,
    );
  pack.finalize();
  await done;
  // Node's gzip header carries no file name and a zero time: the same input, the same bytes.
  return zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
}

/** A .tar.gz's entries, in their order. */
export async function entriesOf(archive: Buffer): Promise<Entry[]> {
  const extract = tar.extract();
  const entries: Entry[] = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const type = header.type === "directory" ? "directory" : "file";
        if (header.type !== "file" && header.type !== "directory")
          return reject(new Error(`unexpected ${header.type} entry ${header.name}`));
        entries.push({ name: header.name, mode: header.mode ?? 0o644, body: Buffer.concat(chunks), type });
        next();
      });
      stream.resume();
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  extract.end(zlib.gunzipSync(archive));
  await done;
  return entries;
}

/** Stamps every file and folder under `dir` with `seconds`. */
export function stamp(dir: string, seconds: number): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) stamp(p, seconds);
    fs.utimesSync(p, seconds, seconds);
  }
}

/** The commit's time in seconds (SOURCE_DATE_EPOCH wins, as reproducible builds agree). */
export function sourceDate(root: string): number {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Number(execFileSync("git", ["log", "-1", "--format=%ct"], { cwd: root, encoding: "utf8" }).trim());
}
