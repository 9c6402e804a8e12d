/**
 * Benchmark of the network-aware a9s binding on the running local stack (not a test: it asserts
 * nothing): from `kubectl apply` of a ServiceBinding to a Secret an app can use, for a service
 * with one endpoint (`keyvalue`, Redis standing in for Valkey) and one with four (`prometheus`),
 * each against real servers (test/helpers/a9s-servers.ts), `--runs` bindings one after another.
 * The bench plays provider-anynines as the e2e does (test/helpers/a9s-stand-in.ts): it writes the
 * broker's credentials as soon as Crossplane has composed the managed binding. Baseline in the
 * same run: the same binding through NOOP paths (the same function steps and Secret, no path to
 * realise). Usable: the Secret exists with a host key of the type (`host`, `prometheus_urls`).
 * The goal is a p50 of 10 s or less on this 2-core machine.
 *
 *   npm run up && npm run bench:binding-a9s -- --runs 10
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Command } from "commander";
import { repoRoot } from "../../host/automation/toolchain";
import { quantile } from "../helpers/bench-quantile";
import { eventually, kubectl, kubectlApply, kubectlTry } from "../helpers/kubectl";
import { a9sNetworkServiceBindingComposition } from "../../lib/dataservices/compositions";
import { a9sServer } from "../helpers/a9s-servers";
import {
  a9sBindingClaim,
  a9sBindingsOf,
  implementA9sBinding,
  installA9sStandIn,
  removeA9sStandIn,
} from "../helpers/a9s-stand-in";

const NS = "cluster-app-1";
const SERVERS = "a9s-bench-servers";
const TYPES = { keyvalue: "host", prometheus: "prometheus_urls" } as const;
const PATHS = ["proxy", "noop"] as const;

async function main(): Promise<void> {
  const opts = new Command()
    .option("--runs <n>", "bindings per type and path", "10")
    .parse()
    .opts<{ runs: string }>();
  const runs = Number(opts.runs);
  const stateDir = process.env.KLUTCH_LOCAL_DIR ?? path.join(repoRoot, ".klutch", "local");
  const cp = path.join(stateDir, "control-plane", "kubeconfig");
  const node = JSON.parse(
    fs.readFileSync(path.join(stateDir, "control-plane", "node", "node.json"), "utf8"),
  ) as {
    images: Record<string, string>;
  };
  const apply = (doc: object) => {
    const r = kubectlApply(cp, JSON.stringify(doc));
    if (r.status !== 0) throw new Error(r.stderr);
  };
  const servers = Object.fromEntries(
    Object.keys(TYPES).map((t) => [
      t,
      a9sServer(t as keyof typeof TYPES, {
        namespace: SERVERS,
        images: node.images,
        password: "bench-pw",
        cacrt: "",
      }),
    ]),
  );
  apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: SERVERS } });
  for (const s of Object.values(servers)) for (const m of s.manifests) apply(m);
  kubectl(cp, ["-n", SERVERS, "wait", "--for=condition=Available", "deployment", "--all", "--timeout=180s"]);
  const compositions = Object.fromEntries(
    PATHS.map((p) => {
      const c = a9sNetworkServiceBindingComposition({}, p) as { metadata: { name: string } };
      c.metadata.name = `bench-a9s-servicebinding-network-${p}`;
      return [p, c];
    }),
  );
  for (const c of Object.values(compositions)) installA9sStandIn(cp, repoRoot, c);

  const times: Record<string, number[]> = {};
  const made: string[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      for (const [type, key] of Object.entries(TYPES)) {
        for (const p of PATHS) {
          const name = `bench-${type}-${p}-${i}`;
          const started = Date.now();
          apply(a9sBindingClaim(name, NS, type, compositions[p]!.metadata.name));
          made.push(name);
          await eventually(
            `${name}'s managed binding`,
            () => a9sBindingsOf(cp, name, NS).length === 1,
            120_000,
          );
          implementA9sBinding(cp, a9sBindingsOf(cp, name, NS)[0]!, servers[type]!.credentials);
          await eventually(
            `${name}'s Secret`,
            () =>
              kubectlTry(cp, [
                "-n",
                NS,
                "get",
                "secret",
                `${name}-credentials`,
                "-o",
                `jsonpath={.data.${key}}`,
              ]).stdout.trim() !== "",
            300_000,
          );
          (times[`${type} ${p}`] ??= []).push((Date.now() - started) / 1000);
          console.log(`${name}: ${times[`${type} ${p}`]!.at(-1)!.toFixed(1)} s`);
        }
      }
    }
    console.log(`\n${runs} bindings each, one at a time (s from apply to a usable Secret):`);
    for (const [k, xs] of Object.entries(times))
      console.log(
        `${k.padEnd(20)} p50 ${quantile(xs, 0.5).toFixed(1)}   p95 ${quantile(xs, 0.95).toFixed(1)}`,
      );
    for (const type of Object.keys(TYPES)) {
      const p50 = quantile(times[`${type} proxy`]!, 0.5);
      const ratio = p50 / quantile(times[`${type} noop`]!, 0.5);
      console.log(
        `${type}: proxy / noop p50 ${ratio.toFixed(2)}; goal p50 ≤ 10 s ${p50 <= 10 ? "met" : "missed"} (${p50.toFixed(1)} s)`,
      );
    }
  } finally {
    for (const name of made) kubectlTry(cp, ["-n", NS, "delete", "servicebinding", name, "--wait=false"]);
    await eventually(
      "the bench's bindings to go",
      () => made.every((n) => a9sBindingsOf(cp, n, NS).length === 0),
      300_000,
    );
    for (const c of Object.values(compositions)) removeA9sStandIn(cp, c.metadata.name);
    kubectlTry(cp, ["delete", "namespace", SERVERS, "--wait=false"]);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
