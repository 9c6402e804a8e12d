import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { eventually } from "./kubectl";

/**
 * An S3 server on loopback for the tests that keep Pulumi state in S3, as a bridge Deployment
 * does (`bridge.state: {kind: backend, url: s3://…}`): moto's S3 (PyPI `moto[s3]`, with Flask
 * for its HTTP server), installed on first use into a venv of its own in the toolchain's cache,
 * every package pinned by s3-server-constraints.txt. Credentials are moto's to ignore; the
 * engine's S3 client (gocloud.dev's s3blob) still wants some, and a region.
 */
const CONSTRAINTS = path.join(__dirname, "s3-server-constraints.txt");
const MOTO = "moto[s3]==5.1.22";

function venvDir(): string {
  const key = createHash("sha256").update(fs.readFileSync(CONSTRAINTS)).digest("hex").slice(0, 12);
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache");
  return path.join(cache, "klutch-pulumi", "test-tools", `moto-s3-${key}`);
}

/**
 * The moto_server command, installed once (about 10 s). A marker written last says the install
 * finished, so one cut short is made again rather than used.
 */
export function motoServer(): string {
  const dir = venvDir();
  const bin = path.join(dir, "bin", "moto_server");
  const done = path.join(dir, ".installed");
  if (fs.existsSync(done)) return bin;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const run = (argv: string[]) => {
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr || r.stdout}`);
  };
  run(["python3", "-m", "venv", dir]);
  const pip = path.join(dir, "bin", "pip");
  run([pip, "install", "-q", "--disable-pip-version-check", "-c", CONSTRAINTS, MOTO, "flask", "flask-cors"]);
  fs.writeFileSync(done, `${MOTO}\n`);
  return bin;
}

export interface S3Server {
  /** The loopback port it listens on. */
  port: number;
  /** Its URL: every AWS API moto serves (S3, STS, …) answers there. */
  endpoint: string;
  /** A Pulumi backend URL for `prefix` in `bucket` (made by `bucket()`). */
  backendUrl(bucket: string, prefix: string): string;
  /** Makes a bucket. */
  bucket(name: string): Promise<void>;
  /** The keys under `prefix` in `bucket`. */
  keys(bucket: string, prefix: string): Promise<string[]>;
  /** The object at `key` in `bucket`, as text. */
  read(bucket: string, key: string): Promise<string>;
  /** What the engine's S3 client needs in its environment. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3Server(port: number): Promise<S3Server> {
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(motoServer(), ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: "ignore",
  });
  await eventually(
    `moto's S3 server on ${endpoint}`,
    async () => (await fetch(endpoint).catch(() => undefined))?.ok === true,
    30_000,
  );
  return {
    port,
    endpoint,
    backendUrl: (bucket, prefix) =>
      `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&s3ForcePathStyle=true&region=us-east-1`,
    bucket: async (name) => {
      const r = await fetch(`${endpoint}/${name}`, { method: "PUT" });
      if (!r.ok) throw new Error(`making bucket ${name}: HTTP ${r.status} ${await r.text()}`);
    },
    keys: async (bucket, prefix) => {
      const r = await fetch(`${endpoint}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
      return [...(await r.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
    },
    read: async (bucket, key) => (await fetch(`${endpoint}/${bucket}/${key}`)).text(),
    env: { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1" },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
