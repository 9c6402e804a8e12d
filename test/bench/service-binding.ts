/**
 * Benchmark of a data-service binding on the running local stack (not a test: it asserts
 * nothing): from `kubectl apply` of a ServiceBinding to a Secret an app can use (it has `host`),
 * `--runs` bindings one after another to one PostgreSQL instance, alternating the network-aware
 * composition (`a8s-servicebinding-network`: the backend's binding, then an XTCPConnection and
 * its proxy path; usable once the Secret has `host`) with the backend's own binding (`a8s-servicebinding`, the baseline in the same
 * run: the same role pod and Secret, no network path). Prints p50 and p95 of each and the ratio.
 * The goal is a p50 of 10 s or less for the network-aware binding on this 2-core machine.
 *
 *   npm run up && npm run bench:binding -- --runs 10
 */
import * as path from "node:path";
import { Command } from "commander";
import { repoRoot } from "../../host/automation/toolchain";
import { quantile } from "../helpers/bench-quantile";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { postgresqlInstance, serviceBinding } from "../helpers/data-service-claims";

const NS = "cluster-app-1";
const INSTANCE = "bench-pg";

async function main(): Promise<void> {
  const opts = new Command()
    .option("--runs <n>", "bindings per composition", "10")
    .parse()
    .opts<{ runs: string }>();
  const runs = Number(opts.runs);
  const stateDir = process.env.KLUTCH_LOCAL_DIR ?? path.join(repoRoot, ".klutch", "local");
  const cp = path.join(stateDir, "control-plane", "kubeconfig");
  const apply = (doc: object) => {
    const r = kubectlApply(cp, JSON.stringify(doc));
    if (r.status !== 0) throw new Error(r.stderr);
  };
  apply(postgresqlInstance(INSTANCE, NS));
  const ready = (kind: string, name: string) =>
    kubectlJson(cp, ["-n", NS, "get", kind, name]).status?.conditions?.some(
      (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
    ) ?? false;
  await eventually("the instance to be Ready", () => ready("postgresqlinstance", INSTANCE), 300_000);

  // The network-aware Secret is usable once it names the path (`host`); the plain one once it
  // holds a8s's keys (its host is `instance_service`, reachable inside the control plane only).
  const usable = (secret: string, key: string) => {
    const r = kubectlTry(cp, ["-n", NS, "get", "secret", secret, "-o", `jsonpath={.data.${key}}`]);
    return r.status === 0 && r.stdout.trim() !== "";
  };
  const times: Record<string, number[]> = { "a8s-servicebinding-network": [], "a8s-servicebinding": [] };
  for (let i = 0; i < runs; i++) {
    for (const composition of Object.keys(times)) {
      const name = `bench-${composition === "a8s-servicebinding" ? "plain" : "net"}-${i}`;
      const started = Date.now();
      apply(serviceBinding(name, NS, INSTANCE, composition));
      const key = composition === "a8s-servicebinding" ? "instance_service" : "host";
      await eventually(`${name}'s Secret`, () => usable(`${name}-credentials`, key), 300_000);
      times[composition]!.push((Date.now() - started) / 1000);
      console.log(`${name}: ${times[composition]!.at(-1)!.toFixed(1)} s`);
    }
  }
  const line = (c: string) =>
    `${c.padEnd(28)} p50 ${quantile(times[c]!, 0.5).toFixed(1)} s   p95 ${quantile(times[c]!, 0.95).toFixed(1)} s`;
  console.log(`\n${runs} bindings each, one at a time:`);
  for (const c of Object.keys(times)) console.log(line(c));
  const ratio =
    quantile(times["a8s-servicebinding-network"]!, 0.5) / quantile(times["a8s-servicebinding"]!, 0.5);
  console.log(`network-aware / plain, p50: ${ratio.toFixed(2)}`);
  const p50 = quantile(times["a8s-servicebinding-network"]!, 0.5);
  console.log(`goal p50 ≤ 10 s: ${p50 <= 10 ? "met" : "missed"} (${p50.toFixed(1)} s)`);
  for (const c of Object.keys(times))
    for (let i = 0; i < runs; i++)
      kubectl(cp, [
        "-n",
        NS,
        "delete",
        "servicebinding",
        `bench-${c === "a8s-servicebinding" ? "plain" : "net"}-${i}`,
        "--wait=false",
      ]);
  kubectl(cp, ["-n", NS, "delete", "postgresqlinstance", INSTANCE, "--wait=false"]);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
