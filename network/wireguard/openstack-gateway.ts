import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { planIngressRules, ruleKey } from "../../lib/cloud/ingress-rules";
import { gatewayVmAddress } from "../../lib/cloud/openstack/network-plan";
import { renderGatewayCloudInit, type GatewayVmFlows } from "./model/render-cloud-init";
import { WireguardPlan } from "./model/types";
import { GatewayKeys } from "./model/render-wg-quick";
import { OpenstackNetwork } from "../../clusters/openstack/openstack-cluster";
import { ingressSecurityGroup } from "../shared/openstack-security-group";

export interface OpenstackWireguardGatewayArgs {
  /** The data-service network the gateway VM sits in. */
  network: OpenstackNetwork;
  /** The WireGuard plan (see WireguardTunnel.plan). */
  plan: pulumi.Input<WireguardPlan>;
  /** The gateway's private key and the clients' public keys; kept secret. */
  keys: pulumi.Input<GatewayKeys>;
  /** UDP port the gateway listens on; must be the plan's. */
  listenPort: number;
  /** Where clients' packets come from (their egress addresses), e.g. ["198.51.100.7/32"]. */
  clientCidrs: string[];
  /** Data-service ports the gateway forwards to; opened on the data services to the gateway only. */
  dataServicePorts: number[];
  image: string;
  flavor: string;
  /**
   * A floating IP made beforehand, when the clients' config needs the gateway's address
   * before the gateway exists (the plan's endpoint); one is made here when omitted.
   */
  floatingIpAddress?: pulumi.Input<string>;
  keypair?: string;
  /**
   * The bridge's connections (render-cloud-init.ts GatewayVmFlows): the VM reads the flows
   * ConfigMap from the control plane and serves the clients' forwarder lists. Its token makes
   * the user data secret (it is anyway: the private key).
   */
  flows?: pulumi.Input<GatewayVmFlows>;
  /**
   * CIDRs of the package mirrors the VM installs from at first boot (egress on 80 and 443);
   * [] when the image has the packages already. Default: any address.
   */
  packageMirrors?: string[];
}

/**
 * The WireGuard gateway on an OpenStack VM: a port with a fixed address kept out of the
 * subnet's pool, a security group that admits only the listen port (UDP) from the clients,
 * cloud-init from the WireGuard renderer (a secret: it holds the private key), a floating
 * IP for the clients to dial, and a group for the data services that admits their ports from
 * the gateway's address only (the gateway masquerades).
 */
export class OpenstackWireguardGateway extends pulumi.ComponentResource {
  public readonly publicAddress: pulumi.Output<string>;
  public readonly userData: pulumi.Output<string>;
  /** Attach this group to the data-service instances. */
  public readonly dataServiceSecurityGroupId: pulumi.Output<string>;

  constructor(name: string, args: OpenstackWireguardGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:network:OpenstackWireguardGateway", name, {}, opts);
    const net = args.network;
    const opt = { parent: this, provider: net.provider };
    const fixedIp = gatewayVmAddress(net.cidr);
    const plan = pulumi.output(args.plan);

    const gatewayGroup = ingressSecurityGroup(
      `${name}-gateway`,
      "Klutch WireGuard gateway",
      planIngressRules([args.listenPort], args.clientCidrs, "udp"),
      opt,
    );
    // The gateway's group lets nothing out but these TCP destinations (replies are stateful).
    const egress = (
      key: string,
      port: pulumi.Input<number>,
      cidr: pulumi.Input<string>,
      description: string,
    ) =>
      new openstack.networking.SecGroupRule(
        `${name}-gateway-egress-${key}`,
        {
          securityGroupId: gatewayGroup.id,
          direction: "egress",
          ethertype: "IPv4",
          protocol: "tcp",
          portRangeMin: port,
          portRangeMax: port,
          remoteIpPrefix: cidr,
          description,
        },
        opt,
      );
    // Forwarded traffic leaves the gateway towards the data services.
    for (const rule of planIngressRules(args.dataServicePorts, [net.cidr]))
      egress(rule.key, rule.port, rule.cidr, "to the data services");
    // The flows reader calls the control plane's API: egress to that address and port only
    // (to any address on that port when the API is named by a host name, unknown here).
    if (args.flows) {
      // Public facts out of the secret access (its token stays secret).
      const api = pulumi.unsecret(pulumi.output(args.flows).apply((f) => apiEndpoint(f.server)));
      egress("api", api.port, api.cidr, "to the control plane's API (the bridge's flows)");
    }
    // cloud-init installs the packages at first boot: egress to the mirrors, web ports only.
    // Not planIngressRules: that one refuses world ranges for ingress, and a mirror may be anywhere.
    const mirrors = args.packageMirrors ?? ["0.0.0.0/0"];
    for (const port of [80, 443])
      for (const cidr of mirrors)
        egress(
          `packages-${ruleKey("tcp", port, cidr)}`,
          port,
          cidr,
          "package mirrors (cloud-init installs the gateway's packages)",
        );
    const port = new openstack.networking.Port(
      `${name}-port`,
      {
        name: `${name}-port`,
        networkId: net.networkId,
        fixedIps: [{ subnetId: net.subnetId, ipAddress: fixedIp }],
        securityGroupIds: [gatewayGroup.id],
        adminStateUp: true,
      },
      opt,
    );
    this.userData = pulumi.secret(
      pulumi.all([plan, pulumi.output(args.keys), pulumi.output(args.flows)]).apply(([p, k, f]) => {
        if (p.listenPort !== args.listenPort)
          throw new Error(`listenPort ${args.listenPort} differs from the WireGuard plan's ${p.listenPort}`);
        return renderGatewayCloudInit(p, k, f, mirrors.length > 0);
      }),
    );
    const vm = new openstack.compute.Instance(
      `${name}-vm`,
      {
        name: `${name}-vm`,
        imageName: args.image,
        flavorName: args.flavor,
        ...(args.keypair ? { keyPair: args.keypair } : {}),
        networks: [{ port: port.id }],
        userData: this.userData,
      },
      opt,
    );
    const address =
      args.floatingIpAddress ??
      new openstack.networking.FloatingIp(
        `${name}-fip`,
        { pool: net.externalNetworkId, description: "Klutch WireGuard gateway" },
        opt,
      ).address;
    new openstack.networking.FloatingIpAssociate(
      `${name}-fip-associate`,
      { floatingIp: address, portId: port.id },
      { ...opt, dependsOn: [vm] },
    );
    const dataGroup = ingressSecurityGroup(
      `${name}-data-services`,
      "Klutch data services reachable through the WireGuard gateway",
      planIngressRules(args.dataServicePorts, [`${fixedIp}/32`]),
      opt,
    );
    this.publicAddress = pulumi.output(address);
    this.dataServiceSecurityGroupId = dataGroup.id;
    this.registerOutputs({
      publicAddress: this.publicAddress,
      userData: this.userData,
      dataServiceSecurityGroupId: this.dataServiceSecurityGroupId,
    });
  }
}

/** The API server's port, and its address as a /32 when it is an IPv4 literal (else any). */
export function apiEndpoint(server: string): { cidr: string; port: number } {
  const url = new URL(server);
  const port = url.port ? Number(url.port) : 443;
  const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(url.hostname);
  return { cidr: ipv4 ? `${url.hostname}/32` : "0.0.0.0/0", port };
}
