import type { NetworkPathObject } from "../../lib/bridge/api";
import { pathId, planGroup } from "../../lib/bridge/grouping";
import { readyStatus, sameStatus, statusEvent } from "../../lib/bridge/status";
import type { PathHealth } from "../../network/contract/implementation";
import type { PathWriter } from "./client";
import type { PathEventReason } from "./events";

export interface HealthReportDeps {
  paths: (key: string) => NetworkPathObject[];
  health: (key: string, live: NetworkPathObject[]) => Promise<Record<string, PathHealth>>;
  writer: Pick<PathWriter, "writeStatus" | "nudgeComposite">;
  events: {
    record(
      p: NetworkPathObject,
      type: "Normal" | "Warning",
      reason: PathEventReason,
      message: string,
    ): unknown;
  };
  now?: () => number;
}

/**
 * A group's health moved (programs/bridge/controller.ts polls it): each Ready path its data path
 * says a client cannot use now is Ready=False at once, at the endpoint its status already names,
 * rather than after the group's run (an engine run of several seconds on a busy machine; the
 * chaos run, `npm run bench:chaos`, measured the claims Ready for most of an instance's outage).
 * One way only: a path goes back to Ready=True through the run, which knows what else may stand
 * in its way (drift being put back, a problem of its own). Returns the paths it wrote.
 */
export async function reportUnusable(key: string, d: HealthReportDeps): Promise<string[]> {
  const ready = planGroup(d.paths(key)).live.filter(
    (p) =>
      p.status?.hostForConsumer !== undefined &&
      p.status.port !== undefined &&
      p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  if (ready.length === 0) return [];
  const health = await d.health(key, ready);
  const now = new Date((d.now ?? Date.now)()).toISOString();
  const written: string[] = [];
  await Promise.all(
    ready.map(async (p) => {
      const unwell = health[pathId(p)];
      if (!unwell || unwell.ready) return;
      const status = readyStatus(
        p,
        {
          hostForConsumer: p.status!.hostForConsumer!,
          port: p.status!.port!,
          probe: { ready: false, reason: unwell.reason, message: unwell.message },
        },
        now,
      );
      if (sameStatus(p.status, status)) return;
      await d.writer.writeStatus(p, status);
      const ev = statusEvent(status);
      void d.events.record(p, ev.type, ev.reason, ev.message);
      await d.writer.nudgeComposite(p, status).catch(() => undefined);
      written.push(pathId(p));
    }),
  );
  return written;
}
