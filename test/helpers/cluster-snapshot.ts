import { kubectl, kubectlTry } from "./kubectl";

/**
 * Every object a cluster's API serves, by `<apiVersion> <kind> <namespace>/<name>`, with its
 * resourceVersion: two snapshots equal mean nothing was made, changed or deleted in between.
 * Left out: what the control plane rewrites on its own clock (Leases, renewed every few seconds;
 * Events, which record, not configure; ComponentStatuses, computed on each read).
 */
export function clusterSnapshot(kubeconfig: string): Map<string, string> {
  const kinds = kubectl(kubeconfig, ["api-resources", "--verbs=list", "-o", "name"])
    .split("\n")
    .filter((k) => k && !/^(leases|events|componentstatuses)(\.|$)/.test(k));
  // One line an object, not the objects themselves: CRDs alone are megabytes of JSON.
  // Its warnings (deprecated kinds: v1 Endpoints, Crossplane's old Usage) stay in stderr, unprinted.
  const got = kubectlTry(kubeconfig, [
    "get",
    kinds.join(","),
    "--all-namespaces",
    "-o",
    String.raw`jsonpath={range .items[*]}{.apiVersion} {.kind} {.metadata.namespace}/{.metadata.name}{"\t"}{.metadata.resourceVersion}{"\n"}{end}`,
  ]);
  if (got.status !== 0) throw new Error(`kubectl get (every kind) failed: ${got.stderr}`);
  return new Map(
    got.stdout
      .split("\n")
      .filter((l) => l)
      .map((l) => l.split("\t") as [string, string]),
  );
}

/** What differs between two snapshots, a line each: made, deleted, or changed. */
export function snapshotDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const [key, rv] of after)
    if (!before.has(key)) lines.push(`made: ${key}`);
    else if (before.get(key) !== rv) lines.push(`changed: ${key} (${before.get(key)} → ${rv})`);
  for (const key of before.keys()) if (!after.has(key)) lines.push(`deleted: ${key}`);
  return lines;
}
