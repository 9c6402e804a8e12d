import * as pulumi from "@pulumi/pulumi";
import { a9sNetworkServiceBindingComposition } from "../../lib/dataservices/compositions";
import { networkBindingCompositions, type NetworkBindingsArgs } from "./network-binding-compositions";

export type A9sNetworkBindingsArgs = NetworkBindingsArgs;

/**
 * The network-aware ServiceBinding compositions where anynines' service brokers serve the
 * instances (`crossplane.anyninesServices`): `a9s-servicebinding-network` and one
 * `a9s-servicebinding-network-<implementation>` per offered implementation, beside upstream's own
 * `a9s-servicebinding`. Each composes provider-anynines' ServiceBinding as that one does, one
 * XTCPConnection per endpoint its credentials name, and the claim's Secret with every address
 * rewritten to its path (lib/dataservices/compositions.ts), for every service type.
 * Type token `klutch:dataservices:A9sNetworkBindings`.
 */
export class A9sNetworkBindings extends pulumi.ComponentResource {
  public readonly compositions: string[];

  constructor(name: string, args: A9sNetworkBindingsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:dataservices:A9sNetworkBindings", name, {}, opts);
    this.compositions = networkBindingCompositions(this, name, {
      ...args,
      compose: a9sNetworkServiceBindingComposition,
      package: {
        name: "klutch-a9s-network-bindings",
        description:
          "The network-aware ServiceBinding compositions where anynines' service brokers serve the instances.",
      },
    });
    this.registerOutputs({ compositions: this.compositions });
  }
}
