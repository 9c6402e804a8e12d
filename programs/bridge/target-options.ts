import * as fs from "node:fs";
import type { Command } from "commander";
import { cidrProblem } from "../../lib/net/cidr";
import { isPrivateCidr } from "../../network/contract/exposure";
import type { Exposure } from "../../network/contract/exposure";
import { IMPLEMENTATIONS } from "../../network/registry";
import type { Target } from "./program";

/**
 * The options that say where a group's proxy runs, shared by the bridge (programs/bridge/main.ts) and
 * the network preview (programs/commands/preview-network.ts): a preview is only right when it builds each
 * group the way the bridge will, so both read the same flags with the same defaults and checks.
 */
export function addTargetOptions(cmd: Command): Command {
  return cmd
    .option(
      "--target <kind>",
      "where proxies run: local (HAProxy processes on this machine) or kubernetes",
      "local",
    )
    .option("--data-plane-kubeconfig <file>", "kubeconfig of the data-service cluster (target kubernetes)")
    .option("--data-plane-namespace <ns>", "namespace of the proxies (target kubernetes)", "klutch-network")
    .option("--service-type <type>", "Service type of the proxies (target kubernetes)", "LoadBalancer")
    .option(
      "--allowed-sources <cidrs>",
      "comma-separated CIDRs the proxies admit when the environment's settings name none (target kubernetes; NodePort/LoadBalancer)",
    )
    .option("--public-endpoint", "open the proxies to every address on purpose (target kubernetes)")
    .option(
      "--node-host <host>",
      "host NodePort proxies report to consumers (target kubernetes; default: a Ready node's address)",
    )
    .option(
      "--dedicated-cpus <n>",
      "whole CPUs of each proxy pod, pinned with busy polling (target kubernetes; default: shared CPUs)",
    )
    .option("--skip-await", "do not wait for proxy pods (target kubernetes on a cluster without kubelets)")
    .option(
      "--proxy-image <ref>",
      "HAProxy image of the proxy pods (target kubernetes; e.g. a local node's klutch.local/haproxy:…)",
    )
    .option(
      "--bind-address <ip>",
      "address local proxies listen on and report as hostForConsumer",
      "127.0.0.1",
    )
    .option(
      "--port-range <from-to>",
      "ports the proxies hand out (below Linux's ephemeral ports)",
      "22000-22999",
    );
}

export function parsePortRange(text: string): { from: number; to: number } {
  const m = /^(\d+)-(\d+)$/.exec(text);
  const from = Number(m?.[1]);
  const to = Number(m?.[2]);
  if (!m || from < 1 || to > 65535 || from > to) {
    throw new Error(`--port-range "${text}" must be FROM-TO within 1-65535, e.g. 22000-22999`);
  }
  return { from, to };
}

/** The options addTargetOptions adds, as commander parses them. */
export type TargetOptions = Record<string, string | boolean | undefined>;

/** The target the options describe; throws one message naming the flag on bad input. */
export function targetFromOptions(o: TargetOptions, stateDir: string): Target {
  const portRange = parsePortRange(String(o.portRange));
  if (o.target === "local") {
    return { kind: "local", stateDir, bindAddress: String(o.bindAddress), portRange };
  }
  if (o.target === "kubernetes") {
    if (!o.dataPlaneKubeconfig) throw new Error("--target kubernetes needs --data-plane-kubeconfig");
    const target: Target = {
      kind: "kubernetes",
      kubeconfig: fs.readFileSync(String(o.dataPlaneKubeconfig), "utf8"),
      namespace: String(o.dataPlaneNamespace),
      portRange,
      serviceType: String(o.serviceType),
      ...exposureOption(o.allowedSources, o.publicEndpoint === true),
      ...(o.dedicatedCpus !== undefined ? { dedicatedCpus: Number(o.dedicatedCpus) } : {}),
      ...(o.skipAwait ? { skipAwait: true } : {}),
      ...(o.proxyImage ? { proxyImage: String(o.proxyImage) } : {}),
      ...(o.nodeHost ? { nodeHost: String(o.nodeHost) } : {}),
    };
    // Each implementation checks the flags it reads (the proxy: --dedicated-cpus).
    for (const spec of IMPLEMENTATIONS) {
      const problem = spec.targetProblem?.(target);
      if (problem) throw new Error(problem);
    }
    return target;
  }
  throw new Error(`--target "${String(o.target)}" is not one of local, kubernetes`);
}

/**
 * The proxies' exposure from the command line, used for consumer namespaces the environment's
 * settings do not describe (those carry their own). Checked like the config's allowedSources.
 */
function exposureOption(sources: string | boolean | undefined, open: boolean): { exposure?: Exposure } {
  if (open) {
    if (sources !== undefined)
      throw new Error("--public-endpoint admits every address; drop --allowed-sources");
    return { exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true } };
  }
  if (sources === undefined) return {};
  const list = (typeof sources === "string" ? sources : "")
    .split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  for (const c of list) {
    const problem = cidrProblem(c);
    if (problem) throw new Error(`--allowed-sources "${c}" ${problem}`);
    if (c.endsWith("/0"))
      throw new Error(
        `--allowed-sources ${c} admits every address; use --public-endpoint if that is intended`,
      );
  }
  if (list.length === 0) throw new Error("--allowed-sources names no CIDR");
  return { exposure: { sourceRanges: list, internal: list.every(isPrivateCidr), public: false } };
}
