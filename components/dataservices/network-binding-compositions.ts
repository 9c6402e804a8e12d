import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { apiObjects } from "../crossplane/api-objects";

/** What a backend's network-aware binding compositions need (A8sNetworkBindings, A9sNetworkBindings). */
export interface NetworkBindingsArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /**
   * The connector implementations the control plane offers (NOOP included): a network-aware
   * binding composition each, besides the one that takes the connector's default.
   */
  connectionImplementations: string[];
  labels: Record<string, string>;
  /**
   * Crossplane with Klutch's function and the backend's package (whose APIs the compositions
   * compose), and the connector API (whose XTCPConnection they compose).
   */
  dependsOn: pulumi.Resource[];
  /** `instanceNames.zones`: an instance host in one keeps its name in the Secret (lib/instance-names/). */
  instanceZones?: string[];
}

export interface NetworkBindingCompositionsArgs extends NetworkBindingsArgs {
  /** One backend's network-aware binding composition: the default's, or one implementation's. */
  compose: (
    labels: Record<string, string>,
    implementation?: string,
    instanceZones?: readonly string[],
  ) => Record<string, unknown>;
  package: { name: string; description: string };
}

/**
 * A backend's network-aware binding compositions as loose Compositions of the environment: one
 * taking the connector's default, one per offered implementation. Returns their names.
 */
export function networkBindingCompositions(
  parent: pulumi.ComponentResource,
  name: string,
  args: NetworkBindingCompositionsArgs,
): string[] {
  const zones = args.instanceZones ?? [];
  const compositions = [
    args.compose(args.labels, undefined, zones),
    ...args.connectionImplementations.map((i) => args.compose(args.labels, i, zones)),
  ];
  const nameOf = (o: Record<string, unknown>) => (o as { metadata: { name: string } }).metadata.name;
  apiObjects(parent, `${name}-compositions`, {
    provider: args.provider,
    xrds: [],
    compositions: compositions.map((c) => ({ resourceName: `${name}-${nameOf(c)}`, object: c })),
    package: args.package,
    labels: args.labels,
    compositionsAfter: args.dependsOn,
  });
  return compositions.map(nameOf);
}
