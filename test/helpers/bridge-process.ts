/**
 * The Crossplane bridge as a process (programs/bridge/main.ts), started and stopped the same way by every
 * slow test and benchmark that runs it outside a cluster, so a change to how the bridge is
 * started is made once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { NODE_TYPESCRIPT_ARGS, repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { stopChild } from "./child-process";
import { bandArg, type PortBand } from "./ports";

export interface BridgeProcessOptions {
  /** The test's work dir: the bridge's output is appended to `<work>/<logName>`. */
  work: string;
  /** The control plane's kubeconfig, or how to find it once its cluster is up. */
  kubeconfig: string | (() => string);
  stateDir: string;
  /** Its /healthz and /metrics port, from the file's band (test/helpers/ports.ts). */
  opsPort: number;
  /** Its proxies' --port-range; left out, the bridge's own default. */
  portRange?: PortBand | string;
  /** Where it finds pulumi, haproxy and wireguard-go; the toolchain's PATH unless given. */
  PATH?: string;
  /** Collects the bridge's output, for assertions and failure messages. */
  log?: string[];
  /** The log file's name in `work`; "bridge.log" unless several bridges run at once. */
  logName?: string;
  /** Variables added to the bridge's environment. */
  env?: NodeJS.ProcessEnv;
  /** Further flags (--settings, --target, --leader-elect, …). */
  extra?: string[];
}

/**
 * Starts programs/bridge/main.ts on the project's TypeScript loader, as `npm run bridge` does. Its output
 * is kept in the log file (and `log`), and its exit is noted there, so a failing test can show
 * what it last did.
 */
export function startBridgeProcess(opts: BridgeProcessOptions): ChildProcess {
  const kubeconfig = typeof opts.kubeconfig === "string" ? opts.kubeconfig : opts.kubeconfig();
  const portRange =
    opts.portRange === undefined
      ? []
      : ["--port-range", typeof opts.portRange === "string" ? opts.portRange : bandArg(opts.portRange)];
  const child = spawn(
    process.execPath,
    [
      ...NODE_TYPESCRIPT_ARGS,
      "programs/bridge/main.ts",
      ...["--kubeconfig", kubeconfig, "--state-dir", opts.stateDir, "--ops-port", String(opts.opsPort)],
      ...portRange,
      ...(opts.extra ?? []),
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, ...opts.env, PATH: opts.PATH ?? toolchainEnv().PATH },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logFile = path.join(opts.work, opts.logName ?? "bridge.log");
  const keep = (d: Buffer) => {
    opts.log?.push(d.toString());
    fs.appendFileSync(logFile, d);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.once("exit", (code, signal) => fs.appendFileSync(logFile, `-- bridge exited: ${code} ${signal}\n`));
  return child;
}

/**
 * Stops a bridge started by startBridgeProcess and waits until it has exited, so the next bridge
 * can take its ops port and state dir. SIGTERM lets it finish its reconcile; SIGKILL plays a crash.
 */
export async function stopBridgeProcess(
  bridge: ChildProcess | undefined,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<void> {
  await stopChild(bridge, signal);
}

/**
 * The bridge of one test file: the options it always starts with, the process running now and
 * all it has said, so each file's start, restart and clean-up read the same.
 */
export class TestBridge {
  /** Everything the bridge processes of this file have written, for assertions and failures. */
  readonly log: string[] = [];
  private child: ChildProcess | undefined;

  constructor(private readonly options: Omit<BridgeProcessOptions, "log">) {}

  /** The running process, if any. */
  get process(): ChildProcess | undefined {
    return this.child;
  }

  /** Starts the bridge with this file's options, `changes` overriding them for this start. */
  start(changes: Partial<Omit<BridgeProcessOptions, "log">> = {}): ChildProcess {
    this.child = startBridgeProcess({ ...this.options, ...changes, log: this.log });
    return this.child;
  }

  /** Stops the running bridge, if any, and waits for its exit. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await stopBridgeProcess(child, signal);
  }

  /** The last `count` chunks of output, for a failure message. */
  tail(count: number): string {
    return this.log.slice(-count).join("");
  }
}
