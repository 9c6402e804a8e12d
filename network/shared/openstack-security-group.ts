import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { IngressRule } from "../../lib/cloud/ingress-rules";

/**
 * A security group with exactly the planned ingress rules (one port, one source CIDR each).
 * Neutron adds allow-all egress rules to a new group; deleteDefaultRules removes them too,
 * so the group admits and emits nothing beyond what the path needs (replies are stateful).
 */
export function ingressSecurityGroup(
  name: string,
  description: string,
  rules: IngressRule[],
  opts: { parent: pulumi.Resource; provider: openstack.Provider },
): openstack.networking.SecGroup {
  const group = new openstack.networking.SecGroup(
    name,
    { name, description, deleteDefaultRules: true },
    opts,
  );
  for (const rule of rules) {
    new openstack.networking.SecGroupRule(
      `${name}-${rule.key}`,
      {
        securityGroupId: group.id,
        direction: "ingress",
        ethertype: "IPv4",
        protocol: rule.protocol,
        portRangeMin: rule.port,
        portRangeMax: rule.port,
        remoteIpPrefix: rule.cidr,
        description,
      },
      opts,
    );
  }
  return group;
}
