import * as pulumi from "@pulumi/pulumi";
import { a8sNetworkServiceBindingComposition } from "../../lib/dataservices/compositions";
import { networkBindingCompositions, type NetworkBindingsArgs } from "./network-binding-compositions";

export type A8sNetworkBindingsArgs = NetworkBindingsArgs;

/**
 * The network-aware ServiceBinding compositions where a8s serves the instances: a control plane
 * that pulls anynines' data-services Configuration and Klutch's function
 * (`crossplane.functionKlutch`). `a8s-servicebinding-network` and one
 * `a8s-servicebinding-network-<implementation>` per offered implementation, beside upstream's own
 * `a8s-servicebinding`, composing a8s's ServiceBinding as that one does and an XTCPConnection to
 * the instance a8s's credentials name (lib/dataservices/compositions.ts). Upstream's
 * Configuration owns the XRDs; these are loose Compositions of the environment. provider-kubernetes
 * already may manage a8s's ServiceBindings and read Secrets (components/crossplane/crossplane.ts).
 * Type token `klutch:dataservices:A8sNetworkBindings`.
 */
export class A8sNetworkBindings extends pulumi.ComponentResource {
  public readonly compositions: string[];

  constructor(name: string, args: A8sNetworkBindingsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:dataservices:A8sNetworkBindings", name, {}, opts);
    this.compositions = networkBindingCompositions(this, name, {
      ...args,
      compose: a8sNetworkServiceBindingComposition,
      package: {
        name: "klutch-a8s-network-bindings",
        description: "The network-aware ServiceBinding compositions where a8s serves the instances.",
      },
    });
    this.registerOutputs({ compositions: this.compositions });
  }
}
