import type * as pulumi from "@pulumi/pulumi";
import { normalZone, serverAddressProblem, zoneListProblems } from "../../lib/instance-names/corefile-values";

/**
 * The CorefileStubZones provider's `check`: refuses what could never be written before anything
 * is read from the cluster, and puts the zones into one form (lowercase, no final dot, sorted)
 * so that a reordering or a trailing dot is no change. Values Pulumi does not know yet during a
 * preview (the names server's ClusterIP before its Service exists) pass unjudged; the real check
 * follows at `up`. Part of the provider's serialised text, so it imports only pure code.
 */

export interface CorefileStubZonesInputs {
  /** Admin kubeconfig of the app cluster (a secret). */
  kubeconfig: string;
  namespace: string;
  configMap: string;
  key: string;
  zones: string[];
  serverAddress: string;
}

/** How the dynamic provider host hands `check` a value unknown during a preview. */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const unknown = (v: unknown) => v === UNKNOWN || (Array.isArray(v) && v.includes(UNKNOWN));

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

/** Fields that name where the Corefile is: default, rule, and what the rule is. */
const LOCATION = {
  namespace: ["kube-system", DNS_LABEL, "a namespace name (DNS-1123 label)"],
  configMap: ["coredns", DNS_SUBDOMAIN, "a ConfigMap name (DNS-1123 subdomain)"],
  key: ["Corefile", CONFIG_MAP_KEY, "a ConfigMap key (letters, digits, '-', '_', '.')"],
} as const;

export function checkStubZones(news: Partial<Record<keyof CorefileStubZonesInputs, unknown>>): {
  inputs?: CorefileStubZonesInputs;
  failures?: pulumi.dynamic.CheckFailure[];
} {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  const kubeconfig = news.kubeconfig;
  if (!unknown(kubeconfig) && (typeof kubeconfig !== "string" || kubeconfig.trim() === ""))
    failures.push({
      property: "kubeconfig",
      reason:
        "kubeconfig is empty or not text (its value is secret and not shown); pass the app cluster's admin kubeconfig",
    });
  const location: Record<string, unknown> = {};
  for (const [field, [fallback, rule, what]] of Object.entries(LOCATION)) {
    const value = news[field as keyof typeof LOCATION] ?? fallback;
    location[field] = value;
    if (!unknown(value) && !(typeof value === "string" && rule.test(value)))
      failures.push({
        property: field,
        reason: `${field} ${JSON.stringify(value)} is not ${what}; leave it out for "${fallback}", where kubeadm and EKS keep the Corefile`,
      });
  }
  const zones = news.zones;
  if (!unknown(zones))
    for (const reason of zoneListProblems(zones)) failures.push({ property: "zones", reason });
  const address = news.serverAddress;
  // A preview of a Service not made yet gives its ClusterIP as nothing at all, not as unknown
  // (the Kubernetes provider's dry run has none to report): unjudged here too; create and
  // update, which run with the real value, refuse a missing one (lib/instance-names/corefile.ts).
  const notYet = unknown(address) || address === undefined || address === null;
  const addressProblem = notYet ? undefined : serverAddressProblem(address);
  if (addressProblem) failures.push({ property: "serverAddress", reason: addressProblem });
  if (failures.length > 0) return { failures };
  return {
    inputs: {
      ...(location as Pick<CorefileStubZonesInputs, keyof typeof LOCATION>),
      kubeconfig: kubeconfig as string,
      zones: unknown(zones) ? (zones as string[]) : (zones as string[]).map(normalZone).sort(),
      // Left out while not known: the provider's wire format has no undefined.
      ...(address === undefined || address === null ? {} : { serverAddress: address as string }),
    } as CorefileStubZonesInputs,
  };
}
