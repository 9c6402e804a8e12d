import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PackagePause } from "../../providers/dynamic/package-pause";
import { PackagePush } from "../../providers/dynamic/package-push";
import {
  configurationPackageYaml,
  packageTag,
  type ApiPackaging,
  type ConfigurationPackageSpec,
} from "../../lib/crossplane/configuration-package";

/** Where the environment's own packages are pushed and pulled from. */
export interface PackageRegistry {
  /** `host:port` as the control plane's package manager reaches it. */
  address: string;
  /** `host:port` as this machine reaches it, where that differs (a loopback-only registry). */
  pushAddress?: string;
  /** PEM of the CA the registry's certificate is from; Crossplane trusts it already. */
  caBundle: string;
}

/** How an API ships as a package (the plan's), with the control plane's admin kubeconfig. */
export type PackageDelivery = ApiPackaging & {
  /** What the package's PackagePause patches the Configuration with (a secret). */
  kubeconfig: pulumi.Input<string>;
};

export interface ConfigurationPackageArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /** The control plane's admin kubeconfig, for the PackagePause. */
  kubeconfig: pulumi.Input<string>;
  registry: PackageRegistry;
  /** Version the tag starts with (the project's); the stream's digest follows it. */
  version: string;
  package: ConfigurationPackageSpec;
  labels: Record<string, string>;
  /** Applied only, not awaited (a cluster that cannot pull it). */
  skipAwait?: boolean;
  /** What must exist first: Crossplane and the Functions the package depends on. */
  dependsOn?: pulumi.Input<pulumi.Resource>[];
}

/**
 * A Crossplane Configuration built from this program's objects, pushed to the environment's
 * registry and installed by Crossplane's package manager: the way Klutch ships its APIs
 * (a Configuration package, seeds/004), with the objects owned by the package's revision instead
 * of by Pulumi. A change of any object is a new stream, so a new tag, so a new revision that
 * Crossplane rolls out; deleting the Configuration (foreground, @pulumi/kubernetes' default)
 * waits until the objects it owns are gone, and its PackagePause, deleted just before it, keeps
 * Crossplane's package manager from making them again meanwhile (package-pause.ts). Type token
 * `klutch:crossplane:ConfigurationPackage`.
 */
export class ConfigurationPackage extends pulumi.ComponentResource {
  /** `<registry>/<repository>:<tag>` the Configuration installs. */
  public readonly reference: pulumi.Output<string>;
  public readonly configuration: k8s.apiextensions.CustomResource;

  constructor(name: string, args: ConfigurationPackageArgs, opts?: pulumi.ComponentResourceOptions) {
    // Rendered (and so checked) before anything is registered.
    const packageYaml = configurationPackageYaml(args.package);
    super("klutch:crossplane:ConfigurationPackage", name, {}, opts);
    const push = new PackagePush(
      `${name}-push`,
      {
        registry: args.registry.address,
        ...(args.registry.pushAddress ? { pushRegistry: args.registry.pushAddress } : {}),
        repository: `klutch/${args.package.name}`,
        tag: packageTag(args.version, packageYaml),
        caBundle: args.registry.caBundle,
        packageYaml,
      },
      { parent: this, dependsOn: args.dependsOn },
    );
    this.reference = push.reference;
    this.configuration = new k8s.apiextensions.CustomResource(
      `${name}-configuration`,
      {
        apiVersion: "pkg.crossplane.io/v1",
        kind: "Configuration",
        metadata: {
          name: args.package.name,
          labels: args.labels,
          annotations: args.skipAwait
            ? { "pulumi.com/skipAwait": "true" }
            : { "pulumi.com/waitFor": "condition=Healthy" },
        },
        spec: { package: push.reference },
      },
      { parent: this, provider: args.provider, dependsOn: [push, ...(args.dependsOn ?? [])] },
    );
    new PackagePause(
      `${name}-pause`,
      { kubeconfig: args.kubeconfig, configuration: args.package.name },
      { parent: this, dependsOn: [this.configuration] },
    );
    this.registerOutputs({ reference: this.reference });
  }
}
