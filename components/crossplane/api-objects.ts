import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { version as PROJECT_VERSION } from "../../package.json";
import { ConfigurationPackage, type PackageDelivery } from "./configuration-package";
import { withBackgroundDeletion, xrdResource } from "./xrd-resource";

/** One object of an API, with the Pulumi name its loose declaration has always had. */
export interface NamedObject {
  resourceName: string;
  object: Record<string, unknown>;
}

export interface ApiObjectsArgs {
  provider: k8s.Provider;
  xrds: NamedObject[];
  compositions: NamedObject[];
  /** Ship them as this Configuration package; loose objects without. */
  packaging?: PackageDelivery;
  package: { name: string; description: string };
  labels: Record<string, string>;
  /** What must exist before any of them (Crossplane); compositions also wait for `compositionsAfter`. */
  dependsOn?: pulumi.Input<pulumi.Resource>[];
  compositionsAfter?: pulumi.Resource[];
}

/**
 * An API's XRDs and compositions: loose objects, or a Configuration package that holds them.
 *
 * A package installed over existing objects adopts them: Crossplane's establisher
 * (internal/controller/pkg/revision/establisher.go at v1.20.9, `update`) keeps their owner
 * references, adds its revision as controller and the package as owner, and replaces the object
 * with the package's. Were Pulumi then to delete its own resource of an XRD because it left the
 * program, the XRD would go, and Crossplane would delete every composite resource of it: every
 * connection and binding. `retainOnDelete` makes that removal leave the object to its package, but
 * Pulumi reads it from the state, so it must be there one release before the declarations go.
 * Hence `packaging.looseDeclarations`:
 *
 * - `retained` (this release): the loose declarations stay, retained on delete, with the very
 *   content of the package's objects, so no `up` writes them; the package is installed after them
 *   and adopts them. A destroy leaves them to the package, whose foreground deletion takes them.
 * - `none` (the next release): only the package. The retained declarations leave the state; the
 *   objects stay with their package.
 *
 * test/e2e/local-stack.test.ts runs both steps with live connections.
 */
export function apiObjects(
  parent: pulumi.Resource,
  name: string,
  args: ApiObjectsArgs,
): { package?: ConfigurationPackage; loose: pulumi.Resource[] } {
  const packaging = args.packaging;
  const declareLoose = !packaging || packaging.looseDeclarations === "retained";
  const loose: pulumi.Resource[] = [];
  if (declareLoose) {
    const opts = {
      parent,
      provider: args.provider,
      dependsOn: args.dependsOn,
      ...(packaging ? { retainOnDelete: true } : {}),
    };
    const xrds = args.xrds.map((x) => xrdResource(x.resourceName, x.object, opts));
    loose.push(...xrds);
    for (const c of args.compositions)
      loose.push(
        new k8s.apiextensions.CustomResource(
          c.resourceName,
          c.object as k8s.apiextensions.CustomResourceArgs,
          {
            ...opts,
            dependsOn: [...xrds, ...(args.compositionsAfter ?? [])],
          },
        ),
      );
  }
  if (!packaging) return { loose };
  const pkg = new ConfigurationPackage(
    name,
    {
      provider: args.provider,
      kubeconfig: packaging.kubeconfig,
      registry: packaging.registry,
      version: PROJECT_VERSION,
      package: {
        ...args.package,
        crossplaneVersion: ">=v1.17.0-0",
        dependsOn: packaging.dependsOn,
        objects: [
          ...args.xrds.map((x) => withBackgroundDeletion(x.object)),
          ...args.compositions.map((c) => c.object),
        ],
      },
      labels: args.labels,
    },
    { parent, dependsOn: [...(args.dependsOn ?? []), ...(args.compositionsAfter ?? []), ...loose] },
  );
  return { package: pkg, loose };
}
