import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { LayerEntry } from "./oci-layout";

/**
 * Root file systems made of this machine's own Debian binaries: the program and the shared
 * libraries `ldd` says it loads, at the same paths. Why not mmdebstrap or debootstrap: a
 * minimal Debian rootfs takes one to three minutes to fetch and unpack on this 2-core machine
 * and weighs ~100 MB per image, while copying a binary and its libraries takes well under a
 * second, needs nothing from the network, and runs exactly the build the data-plane tests
 * already exercise as a process (same HAProxy, same PostgreSQL).
 */

/** The absolute paths in `ldd` output: `libx.so => /lib/…/libx.so (0x…)` and the loader line. */
export function parseLdd(output: string): string[] {
  const found = new Set<string>();
  for (const line of output.split("\n")) {
    const arrow = /=>\s+(\/\S+)\s+\(/.exec(line);
    const bare = /^\s*(\/\S+)\s+\(/.exec(line);
    const file = arrow?.[1] ?? bare?.[1];
    if (file) found.add(file);
  }
  return [...found].sort();
}

/**
 * The shared libraries host binaries load (none for a static one), with one `ldd` call for
 * all of them: it prints a section per file, and the union is what the image needs.
 */
export function sharedLibraries(...binaries: string[]): string[] {
  if (binaries.length === 0) return [];
  let out: string;
  try {
    out = execFileSync("ldd", binaries, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20,
    });
  } catch (err) {
    // ldd exits 1 when one of the files is static ("not a dynamic executable"); the others'
    // sections are still on stdout.
    const e = err as { stdout?: string; stderr?: string };
    if (/not a dynamic executable|statically linked/.test(`${e.stdout ?? ""}${e.stderr ?? ""}`))
      return parseLdd(e.stdout ?? "");
    throw err;
  }
  return parseLdd(out);
}

/**
 * Layer entries for host files at their own paths, plus every library they load (their
 * content, resolved through symlinks, at the path the loader asks for).
 */
export function hostFiles(files: { path: string; mode?: number }[]): LayerEntry[] {
  const entries: LayerEntry[] = [];
  const seen = new Set<string>();
  const add = (file: string, mode: number) => {
    if (seen.has(file)) return;
    seen.add(file);
    entries.push({ type: "file", path: file, mode, source: fs.realpathSync(file) });
  };
  for (const f of files) {
    add(f.path, f.mode ?? 0o755);
    for (const lib of sharedLibraries(f.path)) add(lib, 0o755);
  }
  return entries;
}

/**
 * Every file and symlink under a host directory, at the same paths (directories follow from
 * their files), skipping paths `skip` matches. Symlinks stay symlinks: their targets are
 * copied too when they are under the same tree (zoneinfo's aliases, for instance).
 */
export function hostTree(dir: string, skip: (file: string) => boolean = () => false): LayerEntry[] {
  const entries: LayerEntry[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const file = `${d}/${e.name}`;
      if (skip(file)) continue;
      if (e.isDirectory()) walk(file);
      else if (e.isSymbolicLink())
        entries.push({ type: "symlink", path: file, target: fs.readlinkSync(file) });
      else if (e.isFile()) {
        entries.push({ type: "file", path: file, mode: fs.statSync(file).mode & 0o7777, source: file });
      }
    }
  };
  walk(dir);
  return entries;
}

/** The shared libraries of every ELF file among the entries (programs and loadable modules). */
export function librariesOf(entries: LayerEntry[]): LayerEntry[] {
  const have = new Set(entries.map((e) => e.path));
  const elves = entries.flatMap((e) => (e.type === "file" && isElf(e.source) ? [e.source] : []));
  return sharedLibraries(...elves)
    .filter((lib) => !have.has(lib))
    .map((lib) => ({ type: "file", path: lib, mode: 0o755, source: fs.realpathSync(lib) }));
}

function isElf(file: string): boolean {
  const fd = fs.openSync(file, "r");
  try {
    const head = Buffer.alloc(4);
    fs.readSync(fd, head, 0, 4, 0);
    return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    fs.closeSync(fd);
  }
}

/** /etc/passwd, /etc/group and nsswitch for the users an image runs as (numeric ids stay valid). */
export function userEntries(users: { name: string; uid: number; home?: string }[]): LayerEntry[] {
  const all = [{ name: "root", uid: 0, home: "/root" }, ...users];
  const passwd = all
    .map((u) => `${u.name}:x:${u.uid}:${u.uid}::${u.home ?? "/"}:/usr/sbin/nologin\n`)
    .join("");
  const group = all.map((u) => `${u.name}:x:${u.uid}:\n`).join("");
  return [
    { type: "content", path: "/etc/passwd", mode: 0o644, content: passwd },
    { type: "content", path: "/etc/group", mode: 0o644, content: group },
    {
      type: "content",
      path: "/etc/nsswitch.conf",
      mode: 0o644,
      content: "passwd: files\ngroup: files\nhosts: files dns\n",
    },
    { type: "dir", path: "/tmp", mode: 0o1777 },
  ];
}

/** The Debian package version of an installed package (`dpkg-query`), e.g. `2.6.12-1+deb12u4`. */
export function debianVersion(pkg: string): string {
  return execFileSync("dpkg-query", ["-W", "-f=${Version}", pkg], { encoding: "utf8" }).trim();
}

/**
 * The PostgreSQL server of this Debian release (`host/scripts/setup.sh` installs the `postgresql`
 * metapackage: 15 on Debian 12, 17 on Debian 13): the newest /usr/lib/postgresql/<major>.
 */
export function debianPostgres(root = "/usr/lib/postgresql"): {
  major: string;
  dir: string;
  bin: string;
  share: string;
  pkg: string;
} {
  const majors = (fs.existsSync(root) ? fs.readdirSync(root) : [])
    .filter((d) => /^\d+$/.test(d) && fs.existsSync(path.join(root, d, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  const major = majors[0];
  if (!major) throw new Error(`no PostgreSQL server under ${root}: run \`bash host/scripts/setup.sh\``);
  const dir = path.join(root, major);
  return {
    major,
    dir,
    bin: path.join(dir, "bin"),
    share: `/usr/share/postgresql/${major}`,
    pkg: `postgresql-${major}`,
  };
}
