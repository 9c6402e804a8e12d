import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { BuiltImage, ImageSpec } from "../../host/local-clusters/images/oci-layout";

/**
 * A node's image run the way its container would, without a node: the archive's layer unpacked
 * into a directory, its entrypoint started as the image's user in its working directory, with
 * that directory as root, in new PID, mount and network namespaces (`unshare`). The network
 * namespace has only its own loopback, so whatever the image serves is reachable from commands
 * run beside it (`exec`, in the same namespaces and root, as a client in the pod would be) and
 * from nowhere else: nothing listens on the host. /proc and the host's /dev are mounted into the
 * root inside the mount namespace only, as a runtime gives a container its own. Needs root.
 */

export interface SandboxResult {
  code: number;
  out: string;
  err: string;
}

const START = `set -e
root=$1 wd=$2 uid=$3 gid=$4
shift 4
ip link set lo up
mkdir -p "$root/proc" "$root/dev"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
exec unshare --root="$root" --wd="$wd" --setgid="$gid" --setuid="$uid" -- "$@"
`;

export class ImageSandbox {
  private child?: ChildProcess;
  private output = "";
  /** The host PID of the namespace's first process: the entrypoint, then what it execs. */
  pid = 0;

  private constructor(
    readonly root: string,
    readonly spec: ImageSpec,
  ) {}

  /** Unpacks the image's one layer from its OCI archive into `dir`/root. */
  static unpack(image: BuiltImage, spec: ImageSpec, dir: string): ImageSandbox {
    const layout = path.join(dir, "oci");
    const root = path.join(dir, "root");
    fs.mkdirSync(layout, { recursive: true });
    fs.mkdirSync(root, { recursive: true });
    execFileSync("tar", ["-xf", image.archive, "-C", layout]);
    execFileSync("tar", [
      "-xf",
      path.join(layout, "blobs", "sha256", image.layerDigest.slice(7)),
      "-C",
      root,
    ]);
    fs.rmSync(layout, { recursive: true, force: true });
    return new ImageSandbox(root, spec);
  }

  private get user(): [string, string] {
    const [uid = "0", gid = uid] = (this.spec.config.User ?? "0").split(":");
    return [uid, gid];
  }

  /** The image's Env with `env` over it, as the runtime gives a container. */
  private env(env: Record<string, string>): Record<string, string> {
    const image = Object.fromEntries(
      (this.spec.config.Env ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
    );
    // The host's tools (ip, mount, unshare, nsenter) run before the root changes.
    return { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...image, ...env };
  }

  /** Starts the entrypoint (the image's Entrypoint and Cmd, or `argv`); resolves once it runs. */
  async start(env: Record<string, string> = {}, argv?: string[]): Promise<void> {
    const command = argv ?? [...(this.spec.config.Entrypoint ?? []), ...(this.spec.config.Cmd ?? [])];
    const wd = this.spec.config.WorkingDir ?? "/";
    this.output = "";
    const child = spawn(
      "unshare",
      [
        "--fork",
        "--pid",
        "--mount-proc",
        "--net",
        "--kill-child",
        "sh",
        "-c",
        START,
        "sh",
        this.root,
        wd,
        ...this.user,
        ...command,
      ],
      { env: this.env(env), stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (this.output += d.toString()));
    this.child = child;
    for (let i = 0; i < 100 && !this.pid; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (child.exitCode !== null) throw new Error(`the sandbox exited ${child.exitCode}: ${this.output}`);
      const children = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
      // It runs once it is the image's program (after the setup's shell and unshare's exec).
      const pid = Number(children.split(/\s+/)[0]);
      if (pid && fs.readlinkSync(`/proc/${pid}/root`) === this.root) this.pid = pid;
    }
    if (!this.pid) throw new Error(`the sandbox did not start: ${this.output}`);
  }

  /** What the entrypoint has printed so far. */
  log(): string {
    return this.output;
  }

  private enter(user: [string, string]): string[] {
    const [uid, gid] = user;
    // --root and --wd without a directory: the entrypoint's own, as `kubectl exec` gets its container's.
    return ["-t", String(this.pid), "-n", "-m", "--root", "--wd", "-S", uid, "-G", gid, "--"];
  }

  /** Runs a command beside the entrypoint: same namespaces and root, the image's user. */
  exec(argv: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<SandboxResult> {
    return new Promise((resolve) => {
      execFile(
        "nsenter",
        [...this.enter(this.user), ...argv],
        { env: this.env(env), timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 8 << 20 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
          resolve({ code, out: stdout.toString(), err: stderr.toString() });
        },
      );
    });
  }

  /** Starts a second server beside the entrypoint, in its PID namespace too, so it ends with it. */
  spawnBeside(argv: string[], env: Record<string, string> = {}): ChildProcess {
    const child = spawn("nsenter", ["-p", ...this.enter(this.user), ...argv], {
      env: this.env(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (this.output += d.toString()));
    return child;
  }

  /**
   * Stops the entrypoint as a runtime does (`signal`, then SIGKILL after `graceMs`); every other
   * process of the PID namespace ends with it, and the namespaces and their mounts with them.
   * Returns how the entrypoint ended: its exit code, or -1 when it had to be killed.
   */
  async stop(signal: NodeJS.Signals = "SIGTERM", graceMs = 20_000): Promise<number> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? -1;
    const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? -1)));
    // unshare --kill-child's SIGKILL would not reach it: changing uid clears the parent-death signal.
    process.kill(this.pid, signal);
    const timer = setTimeout(() => {
      try {
        process.kill(this.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }, graceMs);
    const code = await exited;
    clearTimeout(timer);
    this.pid = 0;
    return code;
  }
}
