import * as path from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import type { NetworkPathObject, PathEndpoint, PathProblem } from "../../lib/bridge/api";
import type { CheckpointRecovery } from "../../lib/bridge/checkpoint";
import { StepTimings } from "../../lib/bridge/step-timings";
import { EngineDiagnostics, withoutSdkLogLines } from "../../lib/bridge/diagnostics";
import { hasFinalizer, pathId, planGroup } from "../../lib/bridge/grouping";
import type { BridgeMetrics } from "./metrics";
import { realisationOf, unsupportedImplementation } from "../../network/registry";
import {
  NODE_PORT_ALLOCATED,
  nodePortRefusedMessage,
  refusedNodePorts,
} from "../../lib/bridge/node-port-refusals";
import {
  driftStatus,
  failedStatus,
  problemStatus,
  readyStatus,
  sameStatus,
  statusEvent,
} from "../../lib/bridge/status";
import type { PathWriter } from "./client";
import type { PathEventReason } from "./events";
import { describeDrift, type DriftLedger } from "../../lib/bridge/drift";
import type { Logger } from "./log";
import type { GroupStacks } from "./group-stacks";
import type { PathHealth } from "../../network/contract/implementation";
import { TerminalError, type Result } from "./workqueue";

/**
 * How many API writes (finalizers, status, annotations) of one reconcile are in flight at
 * once: one at a time, 100 new paths cost 100 round trips three times over (the trace of a
 * group of 100 new paths on a loaded machine: 17.5 s of finalizers, 30.6 s of status writes).
 */
export const WRITE_CONCURRENCY = 10;

/** Runs fn over items, at most `limit` at once; rejects with the first failure once all settled. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item).catch((e: unknown) => failures.push(e));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

/** How soon a group is built again after the API server refused some of its node ports. */
export const NODE_PORT_RETRY_MS = 500;

/** How soon a routed group whose probe failed is probed again. */
export const PROBE_RETRY_MS = 15_000;
/** Path problems that may come right by themselves (a port freed, a new Service's name served). */
const RETRIED_PROBLEMS: ReadonlySet<string> = new Set<PathProblem["reason"]>([
  "ForwarderFailed",
  "HostUnresolved",
]);

export interface ReconcilerDeps {
  /** The group's paths as the cache has them now. */
  paths: (key: string) => NetworkPathObject[];
  /** When the bridge first saw a path (for the trace). */
  firstSeen: (id: string) => number | undefined;
  stacks: GroupStacks;
  writer: PathWriter;
  events: {
    record(
      p: NetworkPathObject,
      type: "Normal" | "Warning",
      reason: PathEventReason,
      message: string,
    ): unknown;
  };
  metrics: Pick<
    BridgeMetrics,
    | "recordReconcile"
    | "recordEngineRun"
    | "setPathsNotRealised"
    | "recordCheckpointRecovery"
    | "recordDriftCorrected"
  >;
  log: Logger;
  /**
   * Drift noted on the group's objects in the data plane (programs/bridge/drift-watch.ts): the
   * run that takes it refreshes, and says on each path what it put back.
   */
  drift?: Pick<DriftLedger, "take" | "giveBack">;
  /** Each engine event of a group's run (drift healing tells the run's own deletions by them). */
  onRunEvent?: (key: string, e: EngineEvent) => void;
  /** The data plane's namespace the drifted objects are in (for the Events' words). */
  driftNamespace?: string;
  /** True once the bridge stops: a run cancelled then is no failure. */
  stopping: () => boolean;
  now?: () => number;
}

/**
 * Reconciles one group (a consumer namespace and implementation) from the cache: its stack is
 * brought in line with its live paths, each path's status says what came of it, and deleted
 * paths are let go. Level-triggered: every run recomputes the group from the objects, so a
 * restart at any point converges. Returns when to run again (a failed probe), throws a
 * TerminalError when retrying cannot help (an implementation this bridge does not realise),
 * and throws the engine's diagnostic when the run failed (the work queue retries with backoff).
 */
export class GroupReconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  async reconcile(key: string): Promise<Result> {
    const d = this.deps;
    const clock = d.now ?? Date.now;
    const started = clock();
    const { live, releasing } = planGroup(d.paths(key));
    const log = (level: Parameters<Logger>[0], msg: string, f: Record<string, unknown> = {}) =>
      d.log(level, msg, { group: key, ...f });
    const implementation = live[0]?.spec.implementation ?? releasing[0]?.spec.implementation ?? "";
    const realisation = realisationOf(implementation);
    if ((live.length > 0 || releasing.length > 0) && realisation === undefined) {
      // Nothing of ours to build or clean up: say so on each path and let deletions through.
      const message = unsupportedImplementation(implementation);
      const now = new Date(clock()).toISOString();
      for (const p of live) {
        await d.writer
          .writeStatus(p, failedStatus(p, message, now))
          .catch((err: Error) =>
            log("warn", "could not write status", { path: pathId(p), error: err.message }),
          );
      }
      for (const p of releasing) await this.release(p, key);
      d.metrics.recordReconcile("error", (clock() - started) / 1000);
      throw new TerminalError(message);
    }
    // Where a reconcile's time goes (logged as "reconcile trace"; test/bench/bridge.ts reads it).
    const marks: Record<string, number> = {};
    let last = started;
    const mark = (phase: string) => {
      const t = clock();
      marks[phase] = t - last;
      last = t;
    };
    const waiting = live.filter((p) => !p.status?.hostForConsumer).map((p) => d.firstSeen(pathId(p)));
    const seen = waiting.filter((t): t is number => t !== undefined);
    const drifted = live.length > 0 ? (d.drift?.take(key) ?? []) : [];
    const diagnostics = new EngineDiagnostics();
    const steps = new StepTimings(clock);
    const run = {
      // The cause of a failure comes from the engine's events (lib/bridge/diagnostics.ts), and
      // so does where the run spent its time (lib/bridge/step-timings.ts).
      onEvent: (e: EngineEvent) => {
        diagnostics.onEvent(e);
        steps.onEvent(e);
        d.onRunEvent?.(key, e);
      },
      onRecovered: (plan: CheckpointRecovery & { sidecars: string[] }) =>
        this.recovered(key, live, plan, log),
      // Routed paths are probes and forwarded ones (WireGuard) are local processes whose
      // read reports their health: refresh brings both in line with what really runs. After
      // drift, the refresh reads the changed or deleted objects, so the update puts them back.
      refresh: realisation === "routed" || realisation === "forwarded" || drifted.length > 0,
      log,
    };
    try {
      await forEachLimit(
        live.filter((p) => !hasFinalizer(p)),
        WRITE_CONCURRENCY,
        (p) => d.writer.addFinalizer(p),
      );
      mark("finalizers");
      // Drift: each path says at once that its path is being put back (the claim shows it).
      const drifting = new Map<string, NetworkPathObject>();
      if (drifted.length > 0) {
        const message = `${drifted.map((x) => describeDrift(x, d.driftNamespace ?? "")).join("; ")}; putting it back`;
        const now = new Date(clock()).toISOString();
        await forEachLimit(live, WRITE_CONCURRENCY, async (p) => {
          const status = driftStatus(p, message, now);
          await d.writer.writeStatus(p, status);
          drifting.set(pathId(p), { ...p, status });
          void d.events.record(p, "Warning", "DriftDetected", message);
          await d.writer.nudgeComposite(p, status).catch(() => undefined);
        });
        mark("drift");
      }
      let endpoints: Record<string, PathEndpoint> = {};
      let problems: Record<string, PathProblem> = {};
      d.metrics.recordEngineRun();
      if (live.length > 0) {
        // Routed paths are probes: refresh re-probes them, so an instance that came up (or
        // went away) since the last run is reported as it is now.
        const out = await d.stacks.up(key, live, run);
        mark("up");
        endpoints = out.endpoints;
        problems = out.problems;
        log("info", "network paths up", {
          paths: live.length,
          ...(out.changes ? { changes: out.changes } : {}),
          ...(Object.keys(problems).length > 0 ? { notRealised: Object.keys(problems).length } : {}),
        });
      } else {
        await d.stacks.destroy(key, run);
        mark("destroy");
        log("info", "group has no paths; stack destroyed");
      }
      // Ready means a client can use the path now: its data path's own health (the proxy's
      // HAProxy checks) overrides what the run reported, where it says the path is not usable.
      const health: Record<string, PathHealth> =
        live.length > 0 && d.stacks.health
          ? await d.stacks.health(key, live).catch((err: Error) => {
              log("warn", "could not read the paths' health", { error: err.message });
              return {};
            })
          : {};
      mark("health");
      const now = new Date(clock()).toISOString();
      const notRealised: Record<string, number> = {};
      const updates: { p: NetworkPathObject; status: ReturnType<typeof readyStatus> }[] = [];
      for (const seen of live) {
        // A path whose drift status was just written is compared with that one.
        const p = drifting.get(pathId(seen)) ?? seen;
        const realised = endpoints[pathId(p)];
        const unwell = health[pathId(p)];
        const endpoint =
          realised && unwell && !unwell.ready
            ? { ...realised, probe: { ready: false, reason: unwell.reason, message: unwell.message } }
            : realised;
        const problem = problems[pathId(p)];
        if (!endpoint && !problem) throw new Error(`the program reported no endpoint for ${pathId(p)}`);
        if (problem) notRealised[problem.reason] = (notRealised[problem.reason] ?? 0) + 1;
        const status = endpoint
          ? readyStatus(p, endpoint, now)
          : problemStatus(p, problem as PathProblem, now);
        if (!sameStatus(p.status, status)) updates.push({ p, status });
      }
      // Each path's status, then at once the annotation that makes Crossplane copy it into the
      // composite (rather than at its next poll; best effort, the poll still comes).
      await forEachLimit(updates, WRITE_CONCURRENCY, async ({ p, status }) => {
        await d.writer.writeStatus(p, status);
        // An Event per changed outcome: a group's 100 unchanged paths stay quiet.
        const ev = statusEvent(status);
        void d.events.record(p, ev.type, ev.reason, ev.message);
        await d.writer
          .nudgeComposite(p, status)
          .catch((err: Error) =>
            log("warn", "could not annotate the composite", { path: pathId(p), error: err.message }),
          );
      });
      mark("status");
      for (const drift of drifted) {
        const message = `${describeDrift(drift, d.driftNamespace ?? "")}; put back`;
        log("info", "drift corrected", { kind: drift.kind, object: drift.name, change: drift.change });
        d.metrics.recordDriftCorrected(drift.kind);
        for (const p of live) void d.events.record(p, "Normal", "DriftCorrected", message);
      }
      d.metrics.setPathsNotRealised(key, notRealised);
      await forEachLimit(releasing, WRITE_CONCURRENCY, (p) => this.release(p, key));
      d.metrics.recordReconcile("success", (clock() - started) / 1000);
      log("info", "reconcile trace", {
        paths: live.length,
        waiting: waiting.length,
        ...(seen.length > 0 ? { queuedMs: started - Math.min(...seen) } : {}),
        ...marks,
        totalMs: clock() - started,
        ...(steps.slowest(3).length > 0 ? { slowestSteps: steps.slowest(3) } : {}),
      });
      // A probe that failed, a forwarder that could not listen (a port held by another
      // process), a host name that does not resolve yet (a new Service, before the cluster's
      // DNS serves it): each may come right by itself, so the group is tried again.
      if (
        live.some(
          (p) =>
            endpoints[pathId(p)]?.probe?.ready === false ||
            RETRIED_PROBLEMS.has(problems[pathId(p)]?.reason ?? ""),
        )
      )
        return { requeueAfter: PROBE_RETRY_MS };
      return {};
    } catch (e) {
      // The retry must refresh too, or it would not see what drifted.
      d.drift?.giveBack(key, drifted);
      // Cancelled because the bridge stops: nothing failed, and the next leader carries on.
      if (d.stopping()) {
        log("info", "reconcile cancelled; the bridge is stopping");
        return {};
      }
      const message = engineError(e as Error, diagnostics);
      d.metrics.recordReconcile("error", (clock() - started) / 1000);
      const now = new Date(clock()).toISOString();
      // Node ports refused as already allocated: retrying the same plan cannot help, another
      // port can. Held out of the plan, the group is built again at once.
      const refused = refusedNodePorts(message);
      if (refused.length > 0 && d.stacks.holdOutPorts?.(key, refused)) {
        const moving = nodePortRefusedMessage(key, refused, refused);
        log("warn", "node ports refused as already allocated; building the group without them", {
          ports: refused,
        });
        await forEachLimit(live, WRITE_CONCURRENCY, async (p) => {
          await d.writer
            .writeStatus(p, failedStatus(p, moving, now, NODE_PORT_ALLOCATED))
            .catch((err: Error) =>
              log("warn", "could not write status", { path: pathId(p), error: err.message }),
            );
          void d.events.record(p, "Warning", NODE_PORT_ALLOCATED, moving);
        });
        return { requeueAfter: NODE_PORT_RETRY_MS };
      }
      for (const p of live) {
        await d.writer
          .writeStatus(p, failedStatus(p, message, now))
          .catch((err: Error) =>
            log("warn", "could not write status", { path: pathId(p), error: err.message }),
          );
        // Repeats of the same error only bump the Event's count (programs/bridge/events.ts).
        void d.events.record(p, "Warning", "ReconcileError", message);
      }
      throw new Error(message);
    }
  }

  private async release(p: NetworkPathObject, key: string): Promise<void> {
    await this.deps.writer.removeFinalizer(p);
    this.deps.log("info", "released network path", { path: pathId(p) });
    void this.deps.events.record(p, "Normal", "Released", `network path of group ${key} removed`);
  }

  /** Says that the group's checkpoint was repaired: in the log, the metrics and an Event on each live path. */
  private recovered(
    key: string,
    live: NetworkPathObject[],
    plan: CheckpointRecovery & { sidecars: string[] },
    log: (l: "warn", m: string, f?: Record<string, unknown>) => void,
  ): void {
    const d = this.deps;
    if (plan.sidecars.length > 0) {
      d.metrics.recordCheckpointRecovery("sidecar");
      const files = plan.sidecars.map((f) => path.basename(f));
      log("warn", "removed unreadable metadata files of the file backend", { files });
      for (const p of live)
        void d.events.record(
          p,
          "Warning",
          "CheckpointRepaired",
          `removed unreadable metadata of the stack of group ${key} (${files.join(", ")}), left empty by an interrupted write; the stack is read without it`,
        );
    }
    if (plan.action === "none") return;
    d.metrics.recordCheckpointRecovery(plan.action);
    const message =
      plan.action === "restore"
        ? `the stack checkpoint of group ${key} was unreadable (${plan.problem}); restored the previous one from ${path.basename(plan.from)}, and this run refreshes`
        : `the stack checkpoint of group ${key} was unreadable (${plan.problem}) and no usable older copy exists; the stack is created anew and its resources adopted or re-created`;
    log("warn", "repaired an unreadable checkpoint", {
      action: plan.action,
      problem: plan.problem,
      ...(plan.action === "restore" ? { from: plan.from } : {}),
    });
    const reason = plan.action === "restore" ? "CheckpointRestored" : "CheckpointRecreated";
    for (const p of live) void d.events.record(p, "Warning", reason, message);
  }
}

/**
 * The message of a failed engine run: the engine's diagnostics (each failed resource's type,
 * name, operation and message) when it reported any, else the error's last lines (a failure
 * before the engine ran, e.g. a locked stack or an unreachable API server).
 */
export function engineError(e: Error, diagnostics: EngineDiagnostics): string {
  const summary = diagnostics.summary();
  if (summary) return summary;
  return withoutSdkLogLines(e.message).split("\n").filter(Boolean).slice(-8).join("\n");
}
