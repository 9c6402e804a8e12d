import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { a9sNetworkServiceBindingComposition } from "../../lib/dataservices/compositions";
import { networkBindingCompositions } from "./network-binding-compositions";

export interface A9sNetworkBindingsArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /** The connector implementations the control plane offers (NOOP included): a composition each. */
  connectionImplementations: string[];
  labels: Record<string, string>;
  /**
   * Crossplane with Klutch's function and provider-anynines (whose ServiceBinding these
   * compositions compose), and the connector API (whose XTCPConnection they compose).
   */
  dependsOn: pulumi.Resource[];
}

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
