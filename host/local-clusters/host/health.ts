import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";

export interface TlsFiles {
  /** The CA to verify the server with; `insecure` instead for a self-signed health port. */
  caCert?: string;
  insecure?: boolean;
  clientCert?: string;
  clientKey?: string;
}

interface Reply {
  status: number;
  body: string;
}

function get(url: string, tls: TlsFiles | undefined, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = { timeout: timeoutMs, agent: false };
    if (tls) {
      if (tls.caCert) options.ca = fs.readFileSync(tls.caCert);
      // Only for health endpoints that serve a self-signed cert (kube-scheduler's): no secret
      // is sent and only the status code is read.
      if (tls.insecure) options.rejectUnauthorized = false;
      if (tls.clientCert) options.cert = fs.readFileSync(tls.clientCert);
      if (tls.clientKey) options.key = fs.readFileSync(tls.clientKey);
    }
    const req = (url.startsWith("https:") ? https : http).get(url, options, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
  });
}

/**
 * GETs a health endpoint and returns "ok" when it answers 200 (with its body otherwise, or
 * the connection error), never throwing: the callers poll and report.
 */
export async function probe(url: string, tls?: TlsFiles, timeoutMs = 5_000): Promise<string> {
  try {
    const reply = await get(url, tls, timeoutMs);
    if (reply.status === 200) return reply.body.trim() || "ok";
    // /readyz lists every check as [+] or [-]: the failing ones are the interesting part.
    const lines = reply.body.trim().split("\n");
    const failing = lines.filter((l) => l.startsWith("[-]"));
    return `HTTP ${reply.status}: ${(failing.length > 0 ? failing : lines.slice(-3)).join(" | ")}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** etcd's /health answers 200 with {"health":"true"} once it has a leader. */
export async function probeEtcd(port: number, timeoutMs = 5_000): Promise<string> {
  const answer = await probe(`http://127.0.0.1:${port}/health`, undefined, timeoutMs);
  try {
    return (JSON.parse(answer) as { health?: string }).health === "true" ? "ok" : answer;
  } catch {
    return answer;
  }
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Checked before every attempt; a returned reason ends the wait at once (a process died). */
  abort?: () => string | undefined;
}

/**
 * Polls `attempt` until it returns "ok". Throws with the last answer when the deadline
 * passes or `abort` gives a reason, so the caller can point at the right log file.
 */
export async function waitForOk(
  what: string,
  attempt: () => Promise<string>,
  opts: WaitOptions,
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const reason = opts.abort?.();
    if (reason) throw new Error(`${what}: ${reason}`);
    const last = await attempt();
    if (last === "ok") return;
    if (Date.now() > deadline)
      throw new Error(`${what}: not ready after ${opts.timeoutMs / 1000}s (last answer: ${last})`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}
