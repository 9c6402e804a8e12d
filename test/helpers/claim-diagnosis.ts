import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { kubectlTry } from "./kubectl";

/** Where failed e2e runs leave their Crossplane logs: outside the clone, which CI deletes. */
export const FAILURE_DIR = path.join(os.tmpdir(), "klutch-e2e-failures");

interface Conditioned {
  metadata?: { name?: string; generation?: number; resourceVersion?: string };
  spec?: { resourceRef?: { name?: string } };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

const conditions = (o: Conditioned | undefined) =>
  (o?.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}`)
    .join(", ");

function getJson<T>(kubeconfig: string, args: string[]): T | undefined {
  const r = kubectlTry(kubeconfig, [...args, "-o", "json"]);
  if (r.status !== 0) return undefined;
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    return undefined;
  }
}

/**
 * What each link of claim → XR → NetworkPath last showed, for a claim that never became Ready:
 * which link holds the readiness back. A claim waits on its XR; the XR (Resources mode) on the
 * NetworkPath's Ready condition, read through Crossplane's informer cache; the path's status is
 * the bridge's. The Crossplane log is copied to FAILURE_DIR so that it outlives the run's work
 * directory.
 */
export function claimDiagnosis(
  kubeconfig: string,
  namespace: string,
  name: string,
  crossplaneLog?: string,
): string {
  const lines: string[] = [];
  const claim = getJson<Conditioned>(kubeconfig, ["-n", namespace, "get", "tcpconnection", name]);
  lines.push(`claim ${namespace}/${name}: ${claim ? conditions(claim) : "not found"}`);
  const xrName = claim?.spec?.resourceRef?.name;
  if (xrName) {
    const xr = getJson<Conditioned>(kubeconfig, ["get", "xtcpconnection", xrName]);
    lines.push(`XR ${xrName}: ${xr ? `${conditions(xr)} status=${JSON.stringify(xr.status)}` : "not found"}`);
    const paths = getJson<{
      items: (Conditioned & { metadata: { ownerReferences?: { name: string }[] } })[];
    }>(kubeconfig, ["get", "networkpaths"]);
    for (const p of paths?.items.filter((i) => i.metadata.ownerReferences?.some((o) => o.name === xrName)) ??
      [])
      lines.push(
        `NetworkPath ${p.metadata.name} generation=${p.metadata.generation} rv=${p.metadata.resourceVersion}: ${JSON.stringify(p.status)}`,
      );
  }
  if (crossplaneLog && fs.existsSync(crossplaneLog)) {
    const text = fs.readFileSync(crossplaneLog, "utf8");
    fs.mkdirSync(FAILURE_DIR, { recursive: true });
    const kept = path.join(FAILURE_DIR, `crossplane-${new Date().toISOString().replace(/[:.]/g, "-")}.log`);
    fs.writeFileSync(kept, text);
    lines.push(`crossplane log (whole: ${kept}), last lines:`, ...text.trimEnd().split("\n").slice(-30));
  }
  return lines.join("\n");
}
