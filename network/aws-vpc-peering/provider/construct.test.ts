import { strict as assert } from "node:assert";
import { peeringProblems } from "./construct";
import { KlutchProvider } from "../../../programs/klutch-provider/provider";
import { UNKNOWN } from "../../../providers/kit/schema-model";
import { mockPulumi } from "../../../test/helpers/mocks";
import { ENGINE_UNKNOWN, finish, outputsOf } from "../../../test/helpers/provider";

/** Cloud paths: no AWS or OpenStack here, so these run against the mocks only. */

const requester = {
  label: "app-1",
  region: "eu-central-1",
  accountId: "111111111111",
  vpcId: "vpc-0aaa",
  cidrs: ["10.1.0.0/16"],
  routeTables: [
    { name: "private-0", id: "rtb-0a0" },
    { name: "private-1", id: "rtb-0a1" },
  ],
};
const accepter = {
  label: "control-plane",
  region: "eu-west-1",
  accountId: "222222222222",
  vpcId: "vpc-0bbb",
  cidrs: ["10.2.0.0/16"],
  routeTables: [{ name: "private-0", id: "rtb-0b0" }],
};

describe("klutch provider: VpcPeering (mocks only)", function () {
  this.timeout(30000);

  it("one AWS provider per side, the accepter's assuming its role; routes, peering and the security group", async () => {
    const r = mockPulumi({});
    const made = await new KlutchProvider().construct(
      "peer",
      "klutch:network:VpcPeering",
      {
        requester,
        accepter,
        accepterRoleArn: "arn:aws:iam::222222222222:role/klutch-accepter",
        dataServicePorts: [5432, 6432],
        connections: [{ name: "pg-1", port: 5432 }],
        tags: { team: "a" },
      },
      {},
    );
    const { values } = await outputsOf(made.state);
    await finish();
    const providers = r.ofType("pulumi:providers:aws");
    // The requester's, and the one the component makes to assume the accepter's role.
    assert.deepEqual(providers.map((p) => p.name).sort(), ["peer-accepter-aws", "peer-requester-aws"]);
    const accepterAws = providers.find((p) => p.name === "peer-accepter-aws")!;
    assert.equal(accepterAws.inputs.region, "eu-west-1");
    assert.match(JSON.stringify(accepterAws.inputs.assumeRoles), /klutch-accepter/);
    const requesterAws = providers.find((p) => p.name === "peer-requester-aws")!;
    assert.equal(requesterAws.inputs.region, "eu-central-1");
    assert.deepEqual(JSON.parse(requesterAws.inputs.allowedAccountIds as string), ["111111111111"]);
    const peering = r.ofType("aws:ec2/vpcPeeringConnection:VpcPeeringConnection")[0]!;
    assert.equal(peering.inputs.vpcId, "vpc-0aaa");
    assert.equal(peering.inputs.peerVpcId, "vpc-0bbb");
    assert.equal(peering.inputs.peerOwnerId, "222222222222");
    assert.equal(peering.inputs.peerRegion, "eu-west-1");
    assert.equal(r.ofType("aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter").length, 1);
    const routes = r
      .ofType("aws:ec2/route:Route")
      .map((x) => `${x.inputs.routeTableId} ${x.inputs.destinationCidrBlock}`);
    assert.deepEqual(routes.sort(), ["rtb-0a0 10.2.0.0/16", "rtb-0a1 10.2.0.0/16", "rtb-0b0 10.1.0.0/16"]);
    const rules = r
      .ofType("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
      .map((x) => `${x.inputs.fromPort} ${x.inputs.cidrIpv4}`);
    assert.deepEqual(rules.sort(), ["5432 10.1.0.0/16", "6432 10.1.0.0/16"]);
    assert.deepEqual(values.endpoints, { "pg-1": { port: 5432 } });
    assert.equal(values.securityGroupId, "peer-data-services-id");
  });

  it("refuses a cross-account peering without the accepter's role, a bad region and overlapping VPCs in one message", async () => {
    const r = mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "peer",
        "klutch:network:VpcPeering",
        {
          requester: { ...requester, region: "europe" },
          accepter: { ...accepter, cidrs: ["10.1.128.0/17"] },
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^VpcPeering peer: invalid arguments:/);
        assert.match(
          err.message,
          /requester\.region: must be an AWS region such as eu-central-1 \(got "europe"\)/,
        );
        return true;
      },
    );
    assert.deepEqual(r.resources, []);
    const problems = peeringProblems({ requester, accepter: { ...accepter, cidrs: ["10.1.128.0/17"] } });
    assert.ok(
      problems.some((p) => /overlap/.test(p)),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => /role/i.test(p) && /account/.test(p)),
      problems.join("\n"),
    );
    assert.deepEqual(peeringProblems({ requester, accepter, accepterRoleArn: "role/x" }), [
      'accepterRoleArn: must be an IAM role ARN (got "role/x")',
    ]);
  });

  it("a route table name or region not known yet is refused with what to do; a VPC id not known yet is fine", () => {
    const role = { accepterRoleArn: "arn:aws:iam::222222222222:role/a" };
    assert.deepEqual(peeringProblems({ requester: { ...requester, vpcId: UNKNOWN }, accepter, ...role }), []);
    assert.deepEqual(
      peeringProblems({
        requester: { ...requester, region: UNKNOWN },
        accepter: { ...accepter, routeTables: [{ name: UNKNOWN, id: "rtb-1" }] },
        ...role,
      }),
      [
        "requester.region must be known before the component is created (it decides what is created)",
        "accepter.routeTables[].name must be known before the component is created (names key the routes)",
      ],
    );
  });

  it("through the provider, the engine's unknown marker is what counts as not known", async () => {
    mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "peer",
        "klutch:network:VpcPeering",
        {
          requester: { ...requester, region: ENGINE_UNKNOWN },
          accepter,
          ...{ accepterRoleArn: "arn:aws:iam::222222222222:role/a" },
        },
        {},
      ),
      /requester\.region must be known before the component is created/,
    );
  });
});
