import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { planIngressRules } from "../../lib/cloud/ingress-rules";
import { planRoutedPath } from "../../lib/cloud/openstack/network-plan";
import { OpenstackNetwork } from "../../clusters/openstack/openstack-cluster";
import { ingressSecurityGroup } from "../shared/openstack-security-group";

export interface OpenstackRoutedPathArgs {
  /** The app cluster's network (the consumer). */
  app: OpenstackNetwork;
  /** The data-service network (the control plane's, or its dataServiceCidr). */
  dataService: OpenstackNetwork;
  /** The CIDR data services live in; default the data-service network's CIDR. */
  dataServiceCidr?: string;
  dataServicePorts: number[];
  /** Names the app cluster in descriptions. */
  appLabel: string;
}

/**
 * The `openstack` network path: the data-service router gets a port in the app cluster's
 * subnet (a fixed address kept out of that subnet's pool), the app router routes the
 * data-service CIDR to it, and a security group for the data services admits only their
 * ports from the app cluster's CIDR.
 */
export class OpenstackRoutedPath extends pulumi.ComponentResource {
  /** Attach this group to the data-service instances. */
  public readonly securityGroupId: pulumi.Output<string>;

  constructor(name: string, args: OpenstackRoutedPathArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before super(): bad input registers nothing, not even this component.
    const dataCidr = args.dataServiceCidr ?? args.dataService.cidr;
    const plan = planRoutedPath(args.app.cidr, dataCidr);
    const rules = planIngressRules(args.dataServicePorts, [args.app.cidr]);
    super("klutch:network:OpenstackRoutedPath", name, {}, opts);
    const appOpts = { parent: this, provider: args.app.provider };
    const dataOpts = { parent: this, provider: args.dataService.provider };

    const port = new openstack.networking.Port(
      `${name}-interconnect`,
      {
        name: `${name}-interconnect`,
        networkId: args.app.networkId,
        fixedIps: [{ subnetId: args.app.subnetId, ipAddress: plan.interconnectIp }],
        adminStateUp: true,
      },
      appOpts,
    );
    new openstack.networking.RouterInterface(
      `${name}-interconnect-interface`,
      { routerId: args.dataService.routerId, portId: port.id },
      dataOpts,
    );
    new openstack.networking.RouterRoute(
      `${name}-route`,
      {
        routerId: args.app.routerId,
        destinationCidr: plan.appRoute.destinationCidr,
        nextHop: plan.appRoute.nextHop,
      },
      appOpts,
    );
    const group = ingressSecurityGroup(
      `${name}-data-services`,
      `Klutch data services reachable from ${args.appLabel}`,
      rules,
      dataOpts,
    );
    this.securityGroupId = group.id;
    this.registerOutputs({ securityGroupId: this.securityGroupId });
  }
}
