import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { apiObjects } from "../crossplane/api-objects";

export interface NetworkBindingCompositionsArgs {
  provider: k8s.Provider;
  connectionImplementations: string[];
  labels: Record<string, string>;
  dependsOn: pulumi.Resource[];
  /** One backend's network-aware binding composition: the default's, or one implementation's. */
  compose: (labels: Record<string, string>, implementation?: string) => Record<string, unknown>;
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
  const compositions = [
    args.compose(args.labels),
    ...args.connectionImplementations.map((i) => args.compose(args.labels, i)),
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
