import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { planOpenstackSubnet } from "../../lib/cloud/openstack/network-plan";

export interface ClusterNetworkArgs {
  /** network.nodeCidr: the cluster subnet's CIDR. */
  cidr: string;
  externalNetworkId: string;
  dnsNameservers?: string[];
  provider: openstack.Provider;
  /** Adopt this network, subnet and router instead of creating them. */
  existing?: { networkId: string; subnetId: string; routerId: string };
}

/**
 * A cluster's OpenStack network: a network, a subnet whose pool leaves the top addresses for
 * ports this project places (interconnects, gateway VMs), and a router to the external network.
 */
export class ClusterNetwork extends pulumi.ComponentResource {
  public readonly networkId: pulumi.Output<string>;
  public readonly subnetId: pulumi.Output<string>;
  public readonly routerId: pulumi.Output<string>;
  public readonly cidr: string;

  constructor(name: string, args: ClusterNetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:openstack:ClusterNetwork", name, {}, opts);
    this.cidr = args.cidr;
    if (args.existing) {
      this.networkId = pulumi.output(args.existing.networkId);
      this.subnetId = pulumi.output(args.existing.subnetId);
      this.routerId = pulumi.output(args.existing.routerId);
      this.registerOutputs({ networkId: this.networkId });
      return;
    }
    const plan = planOpenstackSubnet(args.cidr);
    const opt = { parent: this, provider: args.provider };
    const network = new openstack.networking.Network(
      `${name}-net`,
      { name: `${name}-net`, adminStateUp: true },
      opt,
    );
    const subnet = new openstack.networking.Subnet(
      `${name}-subnet`,
      {
        name: `${name}-subnet`,
        networkId: network.id,
        cidr: plan.cidr,
        ipVersion: 4,
        gatewayIp: plan.gatewayIp,
        allocationPools: [plan.allocationPool],
        dnsNameservers: args.dnsNameservers ?? [],
      },
      opt,
    );
    const router = new openstack.networking.Router(
      `${name}-router`,
      { name: `${name}-router`, externalNetworkId: args.externalNetworkId, adminStateUp: true },
      opt,
    );
    new openstack.networking.RouterInterface(
      `${name}-router-interface`,
      { routerId: router.id, subnetId: subnet.id },
      opt,
    );
    this.networkId = network.id;
    this.subnetId = subnet.id;
    this.routerId = router.id;
    this.registerOutputs({ networkId: this.networkId, subnetId: this.subnetId, routerId: this.routerId });
  }
}
