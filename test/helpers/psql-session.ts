import { spawn, type ChildProcess } from "node:child_process";
import { PG_CLIENT_ENV } from "./pg-haproxy";

/** No psqlrc, tuples only and unaligned, quiet, stop on the first error. */
const PSQL_ARGS = ["-X", "-tA", "-q", "-v", "ON_ERROR_STOP=1"];

/**
 * An interactive psql kept open in a child process, so a test can show that one session
 * survives a change (a proxy reload, a new WireGuard peer): send SQL, read its answer. Each
 * query is followed by an `\echo` of a unique marker, and the answer is what psql printed
 * before it, so answers of any number of lines are read whole.
 */
export class PsqlSession {
  private out = "";
  private err = "";

  constructor(private readonly child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => (this.out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (this.err += d.toString()));
    child.on("error", () => undefined);
  }

  /** psql on this machine, to 127.0.0.1:port. */
  static onLoopback(port: number): PsqlSession {
    return new PsqlSession(
      spawn("psql", [...PSQL_ARGS, "-h", "127.0.0.1", "-p", String(port)], { env: PG_CLIENT_ENV }),
    );
  }

  /** psql inside a network namespace, to host:port. */
  static inNetns(ns: string, host: string, port: number): PsqlSession {
    return new PsqlSession(
      spawn("ip", ["netns", "exec", ns, "psql", ...PSQL_ARGS, "-h", host, "-p", String(port)], {
        env: { ...PG_CLIENT_ENV, PGSSLMODE: "disable", PGCONNECT_TIMEOUT: "5" },
      }),
    );
  }

  query(sql: string, timeoutMs = 10000): Promise<string> {
    const marker = `done-${Math.random().toString(36).slice(2)}`;
    const from = this.out.length;
    return new Promise((resolve, reject) => {
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.child.stdout?.off("data", check);
        this.child.off("exit", exited);
        if (error) reject(error);
        else resolve(this.out.slice(from, this.out.indexOf(marker, from)).trim());
      };
      const check = () => {
        if (this.out.includes(marker, from)) finish();
      };
      const exited = () => finish(new Error(`psql exited before answering ${sql}: ${this.err}`));
      const timer = setTimeout(
        () => finish(new Error(`no answer to ${sql} in ${timeoutMs} ms: ${this.err}`)),
        timeoutMs,
      );
      this.child.stdout?.on("data", check);
      this.child.once("exit", exited);
      this.child.stdin?.write(`${sql}\n\\echo ${marker}\n`);
    });
  }

  get stderr(): string {
    return this.err;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends the session (`\q`), killing psql if it does not exit within 3 s. */
  async close(): Promise<void> {
    if (!this.alive) return;
    this.child.stdin?.end("\\q\n");
    await Promise.race([
      new Promise((r) => this.child.once("exit", r)),
      new Promise((r) => setTimeout(r, 3000)),
    ]);
    if (this.alive) this.child.kill("SIGKILL");
  }
}
