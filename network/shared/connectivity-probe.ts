import * as pulumi from "@pulumi/pulumi";
import type { CompleteProvider } from "../../providers/dynamic/provider-type";
import { KlutchResource } from "../../providers/dynamic/klutch-resource";

/**
 * A connectivity probe as a Pulumi resource: it records, Kubernetes-condition style, whether
 * a connection's consumer endpoint works. An unreachable endpoint never fails the
 * deployment; it is recorded as Ready=False with a reason, which is what the XTCPConnection
 * status needs. `create`/`update` probe when the inputs change; `read` probes again, so
 * `pulumi refresh` (or `pulumi up --refresh`) brings the condition up to date.
 *
 * A TCP proxy accepts connections even when the instance behind it is down (HAProxy then
 * closes them at once), so a bare connect says little. The probe therefore also:
 * - watches an accepted connection for `settleMs`: closed without a byte means the proxy
 *   has no healthy backend;
 * - optionally connects to the backend (the instance) itself;
 * - optionally reads HAProxy's stats CSV and requires the backend's server to be UP.
 *
 * Everything it runs is in this file and Node built-ins, required inside the functions, so
 * the serialized provider needs none of this project's modules at run time.
 */

export const REASONS = {
  established: "ConnectivityEstablished",
  refused: "ConnectionRefused",
  timeout: "Timeout",
  unreachable: "HostUnreachable",
  backend: "BackendUnavailable",
  failed: "ConnectionFailed",
} as const;

export interface ProbeTarget {
  host: string;
  port: number;
}

export interface ConnectivityProbeInputs extends ProbeTarget {
  /** Per step (connect, backend connect, stats read); default 3000. */
  timeoutMs: number;
  /** How long to watch an accepted connection for an immediate close; 0 turns it off. Default 1500. */
  settleMs: number;
  /** The instance behind the proxy; when set it must accept TCP too. */
  backend?: ProbeTarget;
  /** HAProxy's stats CSV (e.g. http://127.0.0.1:8404/stats;csv) and the backend section to look up. */
  stats?: { url: string; backend: string };
}

export interface ReadyCondition {
  type: "Ready";
  status: "True" | "False";
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface ConnectivityProbeOutputs extends ConnectivityProbeInputs {
  ready: boolean;
  reason: string;
  message: string;
  condition: ReadyCondition;
}

export interface ProbeResult {
  ready: boolean;
  reason: string;
  message: string;
}

/** `host:port`, with brackets for IPv6. */
export function formatEndpoint(e: ProbeTarget): string {
  return e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}

/** Maps a socket error to a condition reason. */
export function reasonForError(err: { code?: string } | undefined): string {
  switch (err?.code) {
    case "ECONNREFUSED":
      return REASONS.refused;
    case "ETIMEDOUT":
      return REASONS.timeout;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EADDRNOTAVAIL":
      return REASONS.unreachable;
    default:
      return REASONS.failed;
  }
}

/** Outcome of one TCP attempt: connected (and how it behaved), or the error's reason. */
export interface TcpOutcome {
  connected: boolean;
  /** Connected, then closed by the peer within settleMs without sending anything. */
  closedAtOnce: boolean;
  reason: string;
  detail: string;
}

/** Opens one TCP connection with a timeout and, optionally, watches it for `settleMs`. */
export function tcpAttempt(target: ProbeTarget, timeoutMs: number, settleMs: number): Promise<TcpOutcome> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const net = require("node:net") as typeof import("node:net");
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port });
    let done = false;
    // Declared before `finish` uses them: Pulumi's closure serializer cannot follow a
    // closure that refers to a `const` declared further down.
    let timer: NodeJS.Timeout | undefined = undefined;
    let settle: NodeJS.Timeout | undefined = undefined;
    const finish = (outcome: TcpOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(settle);
      socket.destroy();
      resolve(outcome);
    };
    timer = setTimeout(
      () =>
        finish({
          connected: false,
          closedAtOnce: false,
          reason: REASONS.timeout,
          detail: `no answer within ${timeoutMs} ms`,
        }),
      timeoutMs,
    );
    socket.once("error", (err: NodeJS.ErrnoException) =>
      finish({
        connected: false,
        closedAtOnce: false,
        reason: reasonForError(err),
        detail: err.code ?? err.message,
      }),
    );
    socket.once("connect", () => {
      clearTimeout(timer);
      const open: TcpOutcome = {
        connected: true,
        closedAtOnce: false,
        reason: REASONS.established,
        detail: "",
      };
      if (settleMs <= 0) return finish(open);
      // Some protocols speak first (data = alive); others wait (silence = alive); a proxy
      // without a healthy backend hangs up at once.
      socket.once("data", () => finish(open));
      socket.once("close", () => finish({ ...open, closedAtOnce: true, reason: REASONS.backend }));
      socket.once("end", () => finish({ ...open, closedAtOnce: true, reason: REASONS.backend }));
      socket.removeAllListeners("error");
      socket.once("error", () => finish({ ...open, closedAtOnce: true, reason: REASONS.backend }));
      settle = setTimeout(() => finish(open), settleMs);
    });
  });
}

export interface StatsRow {
  proxy: string;
  server: string;
  status: string;
  checkStatus: string;
}

/** Parses HAProxy's `show stat` CSV (header line `# pxname,svname,…`). */
export function parseHaproxyStats(csv: string): StatsRow[] {
  const lines = csv.split("\n").filter((l) => l.trim() !== "");
  const header = (lines[0] ?? "").replace(/^#\s*/, "").split(",");
  const col = (name: string) => header.indexOf(name);
  const [px, sv, st, ck] = [col("pxname"), col("svname"), col("status"), col("check_status")];
  if (px < 0 || sv < 0 || st < 0)
    throw new Error("not an HAProxy stats CSV (no pxname/svname/status columns)");
  return lines.slice(1).map((line) => {
    const f = line.split(",");
    return {
      proxy: f[px] ?? "",
      server: f[sv] ?? "",
      status: f[st] ?? "",
      checkStatus: ck >= 0 ? (f[ck] ?? "") : "",
    };
  });
}

/** GETs a small text document over plain HTTP with a timeout. */
export function httpGet(url: string, timeoutMs: number): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const http = require("node:http") as typeof import("node:http");
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () =>
        res.statusCode === 200
          ? resolve(body)
          : reject(new Error(`HTTP ${res.statusCode ?? "?"} from ${url}`)),
      );
    });
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on("error", reject);
  });
}

/** The whole probe: consumer endpoint, then (optionally) the backend and HAProxy's view of it. */
export async function probe(inputs: ConnectivityProbeInputs): Promise<ProbeResult> {
  const at = formatEndpoint(inputs);
  const front = await tcpAttempt(inputs, inputs.timeoutMs, inputs.settleMs);
  if (!front.connected) {
    return { ready: false, reason: front.reason, message: `no TCP connection to ${at}: ${front.detail}` };
  }
  if (front.closedAtOnce) {
    return {
      ready: false,
      reason: REASONS.backend,
      message: `${at} accepted the connection but closed it at once: the proxy has no healthy backend`,
    };
  }
  if (inputs.backend) {
    const back = await tcpAttempt(inputs.backend, inputs.timeoutMs, 0);
    if (!back.connected) {
      return {
        ready: false,
        reason: REASONS.backend,
        message: `${at} accepts connections but its backend ${formatEndpoint(inputs.backend)} does not: ${back.reason} (${back.detail})`,
      };
    }
  }
  let note = "";
  if (inputs.stats) {
    try {
      const rows = parseHaproxyStats(await httpGet(inputs.stats.url, inputs.timeoutMs));
      const servers = rows.filter(
        (r) => r.proxy === inputs.stats?.backend && r.server !== "BACKEND" && r.server !== "FRONTEND",
      );
      const up = servers.filter((r) => r.status.startsWith("UP"));
      if (up.length === 0) {
        const seen = servers.map(
          (r) => `${r.server} ${r.status}${r.checkStatus ? ` (${r.checkStatus})` : ""}`,
        );
        return {
          ready: false,
          reason: REASONS.backend,
          message: `HAProxy reports no server UP in backend ${inputs.stats.backend}: ${seen.join(", ") || "backend not found"}`,
        };
      }
    } catch (err) {
      // The stats page is a second opinion; not reading it must not flip a working connection.
      note = ` (HAProxy stats not read: ${(err as Error).message})`;
    }
  }
  return { ready: true, reason: REASONS.established, message: `TCP connection available at ${at}${note}` };
}

/** The probe's result as state, keeping lastTransitionTime while the status stays the same. */
export async function probeState(
  inputs: ConnectivityProbeInputs,
  previous?: ReadyCondition,
): Promise<ConnectivityProbeOutputs> {
  const result = await probe(inputs);
  const status = result.ready ? "True" : "False";
  const lastTransitionTime =
    previous && previous.status === status ? previous.lastTransitionTime : new Date().toISOString();
  return {
    ...inputs,
    ...result,
    condition: { type: "Ready", status, reason: result.reason, message: result.message, lastTransitionTime },
  };
}

/**
 * How the dynamic provider host hands `check` a value that is unknown during a preview (e.g. a
 * port from a PortAllocation not created yet); such values are not judged.
 */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Why the probe inputs are unusable: one failure per bad field (values unknown in a preview pass). */
export function probeInputProblems(news: Record<string, unknown>): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  const endpointProblem = (e: unknown, field: string) => {
    if (e === UNKNOWN) return;
    const { host, port } = (e ?? {}) as Record<string, unknown>;
    if (host !== UNKNOWN && (typeof host !== "string" || host.trim() === "")) {
      failures.push({
        property: `${field}host`,
        reason: `${field}host must be a non-empty host name or address`,
      });
    }
    if (
      port !== UNKNOWN &&
      (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
    ) {
      failures.push({
        property: `${field}port`,
        reason: `${field}port must be a whole number from 1 to 65535`,
      });
    }
  };
  endpointProblem(news, "");
  if (news.backend !== undefined) endpointProblem(news.backend, "backend.");
  for (const [field, max] of [
    ["timeoutMs", 60000],
    ["settleMs", 30000],
  ] as const) {
    const v = news[field];
    if (
      v !== undefined &&
      v !== UNKNOWN &&
      (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max)
    ) {
      failures.push({
        property: field,
        reason: `${field} must be a whole number of milliseconds from 0 to ${max}`,
      });
    }
  }
  if (news.stats !== undefined && news.stats !== UNKNOWN) {
    const s = news.stats as Record<string, unknown>;
    if (s.url !== UNKNOWN && (typeof s.url !== "string" || !/^http:\/\/[^/\s]+\/\S*$/.test(s.url))) {
      failures.push({
        property: "stats.url",
        reason: "stats.url must be an http:// URL such as http://127.0.0.1:8404/stats;csv",
      });
    }
    if (s.backend !== UNKNOWN && (typeof s.backend !== "string" || s.backend === "")) {
      failures.push({
        property: "stats.backend",
        reason: "stats.backend must name the HAProxy backend section",
      });
    }
  }
  return failures;
}

const INPUT_KEYS = ["host", "port", "timeoutMs", "settleMs", "backend", "stats"] as const;

export const connectivityProbeProvider: CompleteProvider<
  ConnectivityProbeInputs,
  ConnectivityProbeOutputs,
  "check" | "diff" | "update" | "read" | "delete"
> = {
  check(_olds, news) {
    const failures = probeInputProblems(news as unknown as Record<string, unknown>);
    if (failures.length > 0) return Promise.resolve({ failures });
    const inputs: ConnectivityProbeInputs = {
      host: news.host,
      port: news.port,
      timeoutMs: news.timeoutMs ?? 3000,
      settleMs: news.settleMs ?? 1500,
    };
    // Passed on as given, so a value unknown during a preview stays unknown.
    if (news.backend) inputs.backend = news.backend;
    if (news.stats) inputs.stats = news.stats;
    return Promise.resolve({ inputs });
  },

  diff(_id, olds, news) {
    const changed = INPUT_KEYS.filter((k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
    // A probe has nothing to replace: probing again is an update.
    return Promise.resolve({ changes: changed.length > 0, replaces: [] });
  },

  async create(inputs) {
    const outs = await probeState(inputs);
    return { id: `probe-${formatEndpoint(inputs)}`, outs };
  },

  async update(_id, olds, news) {
    return { outs: await probeState(news, olds.condition) };
  },

  async read(id, props) {
    if (!props || typeof props.host !== "string") return { id, props };
    return { id, props: await probeState(props, props.condition) };
  },

  delete() {
    return Promise.resolve();
  },
};

export interface ConnectivityProbeArgs {
  host: pulumi.Input<string>;
  port: pulumi.Input<number>;
  timeoutMs?: pulumi.Input<number>;
  settleMs?: pulumi.Input<number>;
  backend?: pulumi.Input<ProbeTarget>;
  stats?: pulumi.Input<{ url: string; backend: string }>;
}

/** Probes host:port (and optionally the backend / HAProxy stats); outputs a Ready condition. */
export class ConnectivityProbe extends KlutchResource {
  declare public readonly ready: pulumi.Output<boolean>;
  declare public readonly reason: pulumi.Output<string>;
  declare public readonly message: pulumi.Output<string>;
  declare public readonly condition: pulumi.Output<ReadyCondition>;

  constructor(name: string, args: ConnectivityProbeArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      connectivityProbeProvider,
      name,
      { ...args, ready: undefined, reason: undefined, message: undefined, condition: undefined },
      opts,
      "klutch",
      "ConnectivityProbe",
    );
  }
}
