import type { NetworkPathObject } from "../../lib/bridge/api";
import type { PathStatus, PathWriter } from "./client";
import type { GroupOutputs, GroupStacks, RunOptions } from "./group-stacks";
import { GroupReconciler, type ReconcilerDeps } from "./reconciler";
import type { DriftInformer } from "./drift-watch";
import type { WatchedObject } from "../../lib/bridge/drift";

/** The bridge's unit tests' fakes: a writer, stacks and a reconciler built on them. */

export class FakeWriter implements PathWriter {
  calls: string[] = [];
  statuses = new Map<string, PathStatus>();
  addFinalizer(p: NetworkPathObject) {
    this.calls.push(`finalize ${p.metadata.name}`);
    return Promise.resolve();
  }
  removeFinalizer(p: NetworkPathObject) {
    this.calls.push(`release ${p.metadata.name}`);
    return Promise.resolve();
  }
  writeStatus(p: NetworkPathObject, s: PathStatus) {
    this.calls.push(`status ${p.metadata.name}`);
    this.statuses.set(p.metadata.name, s);
    return Promise.resolve();
  }
  /** The readiness each nudge relays on, by path. */
  relayed = new Map<string, boolean>();
  nudgeComposite(p: NetworkPathObject, s: PathStatus) {
    this.calls.push(`nudge ${p.metadata.name}`);
    this.relayed.set(
      p.metadata.name,
      s.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    );
    return Promise.resolve();
  }
  readSettings() {
    return Promise.resolve(undefined);
  }
}

export class FakeStacks implements GroupStacks {
  outputs: GroupOutputs | Error = { endpoints: {}, problems: {} };
  ups: string[][] = [];
  /** Whether each up refreshed first. */
  refreshes: boolean[] = [];
  destroyed: string[] = [];
  up(_key: string, live: NetworkPathObject[], run: RunOptions): Promise<GroupOutputs> {
    this.ups.push(live.map((p) => p.metadata.name));
    this.refreshes.push(run.refresh);
    return this.outputs instanceof Error ? Promise.reject(this.outputs) : Promise.resolve(this.outputs);
  }
  destroy(key: string): Promise<void> {
    this.destroyed.push(key);
    return Promise.resolve();
  }
  heldOut = new Set<number>();
  holdOutPorts(_key: string, ports: number[]): boolean {
    const before = this.heldOut.size;
    for (const port of ports) this.heldOut.add(port);
    return this.heldOut.size > before;
  }
}

export function reconciler(
  paths: NetworkPathObject[],
  stacks: FakeStacks,
  writer: FakeWriter,
  stopping = false,
  more: Partial<ReconcilerDeps> = {},
) {
  const events: string[] = [];
  const r = new GroupReconciler({
    paths: () => paths,
    firstSeen: () => 0,
    stacks,
    writer,
    events: { record: (_p, type, reason) => events.push(`${type} ${reason}`) },
    metrics: {
      recordReconcile: () => undefined,
      recordEngineRun: () => undefined,
      setPathsNotRealised: () => undefined,
      recordCheckpointRecovery: () => undefined,
      recordDriftCorrected: () => undefined,
    },
    log: () => undefined,
    stopping: () => stopping,
    now: () => 1_000_000,
    ...more,
  });
  return { r, events };
}

/** An informer of the data plane's objects whose events the test emits. */
export class FakeDriftInformer implements DriftInformer {
  private readonly handlers: Record<string, ((o: WatchedObject) => void)[]> = {};
  startError: Error | undefined;
  starts = 0;
  on(verb: string, cb: (o: WatchedObject) => void): void {
    (this.handlers[verb] ??= []).push(cb);
  }
  emit(verb: "add" | "update" | "delete" | "error", o: unknown): void {
    for (const cb of this.handlers[verb] ?? []) cb(o as WatchedObject);
  }
  start(): Promise<void> {
    this.starts++;
    return this.startError === undefined ? Promise.resolve() : Promise.reject(this.startError);
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}
