import { strict as assert } from "node:assert";
import * as aws from "@pulumi/aws";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { networkPolicies } from "../../policy/policies";
import { NETWORK_RULES, ResourceView, violations } from "../../policy/rules";
import { VpcPeering } from "../../network/aws-vpc-peering/vpc-peering";
import { klutchProgram } from "../../program";
import { MockedRun, mockPulumi, settle } from "../helpers/mocks";
import { stackSettings } from "../helpers/stacks";

async function drain(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs a program under the shared mocks and returns what it registered, as policies see it. */
async function captured(
  program: () => void,
  config: Record<string, unknown> = {},
  stack = "test",
): Promise<ResourceView[]> {
  const run: MockedRun = mockPulumi(config, stack);
  program();
  await drain();
  return run.resources.map((r) => ({ type: r.type, props: r.inputs }));
}

/** Rule names that fire on a set of resources. */
const firing = (resources: ResourceView[]) => [...new Set(violations(resources).map((v) => v.rule))].sort();

describe("network-safety policy pack", function () {
  this.timeout(30000);

  describe("passes the stacks this project registers", () => {
    for (const stack of ["aws-example", "openstack-example"]) {
      it(`${stack}: no violations over every captured resource`, async () => {
        const resources = await captured(() => klutchProgram(), stackSettings(stack), stack);
        const ingress = resources.filter((r) => /[Ss]ecGroupRule|SecurityGroupIngressRule/.test(r.type));
        assert.ok(ingress.length >= 1, "the stack has ingress rules to check");
        assert.deepEqual(violations(resources), []);
      });
    }
  });

  describe("catches purpose-built bad programs, each with its own rule", () => {
    it("a data-service port open to the internet", async () => {
      const resources = await captured(() => {
        new aws.vpc.SecurityGroupIngressRule("world-pg", {
          securityGroupId: "sg-1",
          ipProtocol: "tcp",
          fromPort: 5432,
          toPort: 5432,
          cidrIpv4: "0.0.0.0/0",
        });
      });
      assert.deepEqual(firing(resources), [
        "klutch-ingress-from-consumer-network",
        "klutch-no-world-ingress-on-data-service-ports",
      ]);
    });

    it("a port range from the consumer's CIDR (wider than one port)", async () => {
      const resources = await captured(() => {
        new aws.ec2.SecurityGroup("range", {
          vpcId: "vpc-1",
          ingress: [{ protocol: "tcp", fromPort: 5000, toPort: 6000, cidrBlocks: ["10.20.0.0/16"] }],
        });
      });
      assert.deepEqual(firing(resources), ["klutch-ingress-single-port"]);
    });

    it("every protocol from the consumer's CIDR", async () => {
      const resources = await captured(() => {
        new aws.ec2.SecurityGroupRule("all", {
          type: "ingress",
          securityGroupId: "sg-1",
          protocol: "-1",
          fromPort: 0,
          toPort: 0,
          cidrBlocks: ["10.20.0.0/16"],
        });
      });
      assert.deepEqual(firing(resources), ["klutch-ingress-single-port"]);
    });

    it("an OpenStack rule without a source on a non-data-service port", async () => {
      const resources = await captured(() => {
        new openstack.networking.SecGroupRule("anyone", {
          securityGroupId: "sg-1",
          direction: "ingress",
          ethertype: "IPv4",
          protocol: "tcp",
          portRangeMin: 30000,
          portRangeMax: 30000,
        });
      });
      assert.deepEqual(firing(resources), ["klutch-ingress-from-consumer-network"]);
    });

    it("an OpenStack rule from an internet-sized range on PostgreSQL", async () => {
      const resources = await captured(() => {
        new openstack.networking.SecGroupRule("huge", {
          securityGroupId: "sg-1",
          direction: "ingress",
          ethertype: "IPv4",
          protocol: "tcp",
          portRangeMin: 5432,
          portRangeMax: 5432,
          remoteIpPrefix: "0.0.0.0/1",
        });
      });
      assert.deepEqual(firing(resources), ["klutch-ingress-from-consumer-network"]);
    });

    it("a default route over a VPC peering", async () => {
      const resources = await captured(() => {
        new aws.ec2.Route("default-via-peer", {
          routeTableId: "rtb-1",
          destinationCidrBlock: "0.0.0.0/0",
          vpcPeeringConnectionId: "pcx-1",
        });
      });
      assert.deepEqual(firing(resources), ["klutch-peering-routes-to-peer-cidr-only"]);
    });

    it("leaves egress, group-to-group rules and ordinary default routes alone", async () => {
      const resources = await captured(() => {
        new openstack.networking.SecGroupRule("egress", {
          securityGroupId: "sg-1",
          direction: "egress",
          ethertype: "IPv4",
        });
        new aws.vpc.SecurityGroupIngressRule("from-group", {
          securityGroupId: "sg-1",
          ipProtocol: "tcp",
          fromPort: 5432,
          toPort: 5432,
          referencedSecurityGroupId: "sg-2",
        });
        new aws.ec2.Route("nat", {
          routeTableId: "rtb-1",
          destinationCidrBlock: "0.0.0.0/0",
          natGatewayId: "nat-1",
        });
      });
      assert.deepEqual(firing(resources), []);
    });
  });

  it("the VpcPeering component refuses overlapping VPCs before registering any cloud resource", async () => {
    const run = mockPulumi({});
    const provider = new aws.Provider("p", { region: "eu-central-1" });
    const side = (label: string, cidr: string) => ({
      label,
      provider,
      vpcId: pulumi.output("vpc-0a"),
      cidrs: [cidr],
      routeTables: [{ key: "main", id: "rtb-1" }],
      region: "eu-central-1",
    });
    assert.throws(
      () =>
        new VpcPeering("bad", {
          requester: side("app", "10.0.0.0/8"),
          accepter: side("cp", "10.0.0.0/16"),
          dataServicePorts: [5432],
        }),
      /app\.network\.nodeCidr 10\.0\.0\.0\/8 overlaps cp\.network\.nodeCidr 10\.0\.0\.0\/16/,
    );
    await drain();
    assert.equal(run.resources.filter((r) => r.type.startsWith("aws:")).length, 0);
    assert.deepEqual(
      run.resources
        .map((r) => r.type)
        .filter((t) => t !== "pulumi:providers:aws" && t !== "klutch:network:VpcPeering"),
      [],
    );
  });

  it("the CrossGuard policies report exactly what the pure rules return", () => {
    assert.deepEqual(
      networkPolicies.map((p) => [p.name, p.enforcementLevel]),
      NETWORK_RULES.map((r) => [r.name, "mandatory"]),
    );
    const bad = {
      type: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
      props: { ipProtocol: "tcp", fromPort: 5432, toPort: 5432, cidrIpv4: "0.0.0.0/0" },
    };
    for (const [i, policy] of networkPolicies.entries()) {
      const reported: string[] = [];
      const validate = policy.validateResource as (args: any, report: (m: string) => void) => void;
      validate({ ...bad, urn: "urn:x", name: "x", opts: {}, getConfig: () => ({}) }, (m) => reported.push(m));
      assert.deepEqual(reported, NETWORK_RULES[i]!.check(bad), policy.name);
    }
  });
});
