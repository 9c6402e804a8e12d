import type { PreviewStep } from "../../../network/contract/preview";
import type { Hop, HopKind } from "../../../lib/network-preview/schema";

/** What one engine preview said about one resource (a `resourcePreEvent`): the contract's step. */
export type ResourceStep = PreviewStep;

/** Top-level inputs whose values differ between the two sides (none when a side is missing). */
export function changedInputs(
  olds: Record<string, unknown> | undefined,
  news: Record<string, unknown> | undefined,
): string[] {
  if (!olds || !news) return [];
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  return [...keys].filter((k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
}

/** A dynamic resource's own type (the dynamic provider's URN type is the same for all of them). */
function realType(step: ResourceStep): string {
  // Dynamic resources carry their own type after the provider's (pulumi-nodejs:dynamic/klutch:PortAllocation).
  const own = /^pulumi-nodejs:dynamic\/(.+)$/.exec(step.type);
  if (own) return own[1] as string;
  if (step.type !== "pulumi-nodejs:dynamic:Resource") return step.type;
  const name = step.name;
  if (name === "ports") return "klutch:PortAllocation";
  if (name === "haproxy") return "klutch:LocalHaproxy";
  if (name.startsWith("probe-")) return "klutch:ConnectivityProbe";
  return step.type;
}

/** Which hop of a network path a resource is, by its type (and the bridge's resource names). */
export function hopKind(step: ResourceStep): HopKind {
  const t = realType(step);
  if (t === "klutch:PortAllocation") return "proxy-port";
  if (t === "kubernetes:discovery.k8s.io/v1:EndpointSlice") return "kernel-endpoints";
  if (
    t === "klutch:LocalHaproxy" ||
    /TcpProxy|KernelPath|kubernetes:(apps|core)\/v1:(Deployment|Service|ConfigMap)$/.test(t)
  )
    return "proxy-frontend";
  if (t === "klutch:ConnectivityProbe") return "probe";
  if (/wireguard/i.test(t) || /wireguard/i.test(step.name)) return "wireguard-peer";
  if (/aws:ec2\/route:Route|VpcPeering/i.test(t)) return "peering-route";
  if (/securityGroup|secgroup/i.test(t)) return "security-group-rule";
  if (/openstack:networking\/router(Route|Interface)/i.test(t)) return "openstack-route";
  return "other";
}

export function toHop(step: ResourceStep, detail?: string): Hop {
  return {
    kind: hopKind(step),
    op: step.op,
    urn: step.urn,
    type: realType(step),
    // The dynamic provider's serialized code is an input too; its change says nothing about the network.
    diffPaths: step.diffPaths.filter((p) => p !== "__provider"),
    ...(step.op === "replace"
      ? { replaceReasons: step.replaceReasons, deleteBeforeReplace: step.deleteBeforeReplace }
      : {}),
    ...(detail ? { detail } : {}),
  };
}
