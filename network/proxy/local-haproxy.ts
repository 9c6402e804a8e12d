import * as pulumi from "@pulumi/pulumi";
import type { CompleteProvider } from "../../providers/dynamic/provider-type";
import { KlutchResource } from "../../providers/dynamic/klutch-resource";

/**
 * An HAProxy process on this machine running a rendered configuration: the proxy path of
 * the `local` target, where no kubelet runs pods. HAProxy daemonizes (-D) so it outlives
 * the provider process; its pid file in `dir` ties it to this resource. Updates are soft
 * reloads (-sf): the new process takes the listeners and the old one finishes its open
 * sessions, so one connection's change never drops another's sessions.
 *
 * Serialized like the other providers: every method requires what it needs at call time.
 */

export interface LocalHaproxyInputs {
  /** Directory holding haproxy.cfg and haproxy.pid (one per proxy). */
  dir: string;
  config: string;
}

type Helpers = {
  pidOf(dir: string): number | undefined;
  start(inputs: LocalHaproxyInputs): void;
};

export const localHaproxyProvider: CompleteProvider<
  LocalHaproxyInputs,
  LocalHaproxyInputs,
  "diff" | "update" | "delete" | "read"
> &
  Helpers = {
  pidOf(dir: string) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const path = require("node:path") as typeof import("node:path");
    try {
      const pid = Number(fs.readFileSync(path.join(dir, "haproxy.pid"), "utf8").trim().split(/\s+/)[0]);
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      process.kill(pid, 0);
      // A daemon killed under an init that is slow to reap (this CI machine's PID 1 is no init)
      // stays a zombie: signal 0 still finds it, but it serves nothing. proc(5): the state
      // follows the command name's closing parenthesis in /proc/<pid>/stat.
      let stat = "";
      try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        // No /proc (not Linux): signal 0 is all there is to go by.
      }
      if (/^\d+ \(.*\) Z/s.test(stat)) return undefined;
      return pid;
    } catch {
      return undefined;
    }
  },

  start(inputs: LocalHaproxyInputs) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const path = require("node:path") as typeof import("node:path");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { execFileSync } = require("node:child_process") as typeof import("node:child_process");
    fs.mkdirSync(inputs.dir, { recursive: true });
    const cfg = path.join(inputs.dir, "haproxy.cfg");
    // HAProxy outlives the engine that started it, so it must not carry the engine's
    // environment: a restarting bridge reaps the processes whose environment marks them as
    // started by a bridge that is gone (KLUTCH_BRIDGE_INSTANCE, programs/bridge/orphans.ts), and the
    // data path is not a leftover. It also keeps the passphrase out of /proc. HAProxy needs only PATH.
    const env = { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" };
    fs.writeFileSync(`${cfg}.next`, inputs.config);
    // Check before switching: a bad config must not replace a working one.
    execFileSync("haproxy", ["-c", "-q", "-f", `${cfg}.next`], { stdio: ["ignore", "ignore", "pipe"], env });
    fs.renameSync(`${cfg}.next`, cfg);
    const old = this.pidOf(inputs.dir);
    execFileSync(
      "haproxy",
      ["-D", "-f", cfg, "-p", path.join(inputs.dir, "haproxy.pid"), ...(old ? ["-sf", String(old)] : [])],
      { stdio: ["ignore", "ignore", "pipe"], env },
    );
  },

  create(inputs) {
    // Idempotent: after a crash between starting HAProxy and recording it, the pid file
    // still names the process, and starting again soft-replaces it instead of leaking it.
    this.start(inputs);
    return Promise.resolve({ id: inputs.dir, outs: inputs });
  },

  diff(_id, olds, news) {
    if (olds.dir !== news.dir)
      return Promise.resolve({ changes: true, replaces: ["dir"], deleteBeforeReplace: true });
    // A proxy whose process died (machine reboot, OOM kill) is a change even when the config
    // is not: the update starts it again, so every `up` heals the path without a refresh.
    if (this.pidOf(olds.dir) === undefined) return Promise.resolve({ changes: true });
    return Promise.resolve({ changes: olds.config !== news.config });
  },

  update(_id, _olds, news) {
    this.start(news);
    return Promise.resolve({ outs: news });
  },

  read(id, props) {
    // A proxy whose process died is gone: refresh drops it so the next up recreates it.
    if (!props || this.pidOf(props.dir) === undefined)
      return Promise.resolve({ id: "", props: {} as LocalHaproxyInputs });
    return Promise.resolve({ id, props });
  },

  delete(_id, props) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    const pid = this.pidOf(props.dir);
    if (pid) process.kill(pid, "SIGTERM");
    fs.rmSync(props.dir, { recursive: true, force: true });
    return Promise.resolve();
  },
};

export interface LocalHaproxyArgs {
  dir: pulumi.Input<string>;
  config: pulumi.Input<string>;
}

export class LocalHaproxy extends KlutchResource {
  declare public readonly dir: pulumi.Output<string>;
  declare public readonly config: pulumi.Output<string>;

  constructor(name: string, args: LocalHaproxyArgs, opts?: pulumi.CustomResourceOptions) {
    super(localHaproxyProvider, name, { dir: args.dir, config: args.config }, opts, "klutch", "LocalHaproxy");
  }
}
