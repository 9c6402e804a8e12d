import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";

export interface OpenstackProxyAddressArgs {
  provider: openstack.Provider;
  /** The external network floating IPs come from. */
  externalNetworkId: string;
  /** Says what the address is for in OpenStack. */
  description?: string;
}

/**
 * A floating IP for the proxy implementation's load balancer on OpenStack. Reserved apart
 * from the Service, so the address app clusters use survives a recreated Service; hand it
 * to the proxy Service as its loadBalancerIP.
 */
export class OpenstackProxyAddress extends pulumi.ComponentResource {
  public readonly address: pulumi.Output<string>;

  constructor(name: string, args: OpenstackProxyAddressArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:network:OpenstackProxyAddress", name, {}, opts);
    const ip = new openstack.networking.FloatingIp(
      `${name}-fip`,
      { pool: args.externalNetworkId, description: args.description ?? "Klutch TCP proxy" },
      { parent: this, provider: args.provider },
    );
    this.address = ip.address;
    this.registerOutputs({ address: this.address });
  }
}
