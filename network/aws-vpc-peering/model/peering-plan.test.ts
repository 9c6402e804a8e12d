import { strict as assert } from "node:assert";
import { PeeringPlanError, PeeringPlanInput, planPeering } from "./peering-plan";

function peering(extra: Partial<PeeringPlanInput> = {}): PeeringPlanInput {
  return {
    requester: {
      label: "klutch:appClusters[0]",
      cidrs: ["10.20.0.0/16"],
      routeTables: ["public", "private-0", "private-1"],
      region: "eu-central-1",
      accountId: "111111111111",
    },
    accepter: {
      label: "klutch:controlPlane",
      cidrs: ["10.10.0.0/16"],
      routeTables: ["public", "private-0"],
      region: "eu-central-1",
      accountId: "111111111111",
    },
    dataServicePorts: [5432],
    ...extra,
  };
}

describe("VPC peering planner", () => {
  it("plans one route per route table per peer CIDR on both sides", () => {
    const plan = planPeering(
      peering({
        accepter: { ...peering().accepter, cidrs: ["10.10.0.0/16", "10.11.0.0/16"] },
      }),
    );
    const req = plan.routes.filter((r) => r.side === "requester");
    const acc = plan.routes.filter((r) => r.side === "accepter");
    assert.equal(req.length, 3 * 2);
    assert.equal(acc.length, 2 * 1);
    assert.deepEqual(
      acc.map((r) => [r.routeTable, r.destinationCidr]),
      [
        ["public", "10.20.0.0/16"],
        ["private-0", "10.20.0.0/16"],
      ],
    );
    assert.equal(new Set(plan.routes.map((r) => r.key)).size, plan.routes.length, "keys are unique");
    assert.equal(plan.autoAccept, true);
    assert.deepEqual(
      plan.ingress.map((r) => [r.protocol, r.port, r.cidr]),
      [["tcp", 5432, "10.20.0.0/16"]],
    );
  });

  it("needs an accepter resource across accounts or regions", () => {
    const cross = planPeering(
      peering({
        accepter: { ...peering().accepter, accountId: "222222222222", region: "eu-west-1" },
        accepterRoleArn: "arn:aws:iam::222222222222:role/peering",
      }),
    );
    assert.deepEqual([cross.crossAccount, cross.crossRegion, cross.autoAccept], [true, true, false]);
  });

  it("rejects overlaps, missing accepter credentials and foreign VPCs in enhancements, all at once", () => {
    assert.throws(
      () =>
        planPeering(
          peering({
            requester: { ...peering().requester, cidrs: ["10.10.128.0/17"], vpcId: "vpc-0aa" },
            accepter: { ...peering().accepter, accountId: "222222222222", vpcId: "vpc-0bb" },
            connections: [
              {
                name: "pg",
                port: 5432,
                enhancements: [
                  { ConnectionType: "awsVPCPeering", instanceVPC: "vpc-0cc", appClusterVPC: "vpc-0aa" },
                ],
              },
            ],
          }),
        ),
      (e: PeeringPlanError) => {
        assert.equal(e.problems.length, 3, e.message);
        assert.match(
          e.message,
          /nodeCidr 10\.10\.128\.0\/17 overlaps klutch:controlPlane\.network\.nodeCidr 10\.10\.0\.0\/16/,
        );
        assert.match(e.message, /networkConnector\.accepter: .* set accepter\.roleArn/);
        assert.match(
          e.message,
          /awsVPCPeering\.instanceVPC names vpc-0cc, but this path peers klutch:controlPlane's VPC vpc-0bb/,
        );
        return true;
      },
    );
  });

  it("honours awsVPCPeering hints that name this path's VPCs and opens the connections' ports", () => {
    const plan = planPeering(
      peering({
        requester: { ...peering().requester, vpcId: "vpc-0aa" },
        accepter: { ...peering().accepter, vpcId: "vpc-0bb" },
        connections: [
          {
            name: "pg",
            port: 6432,
            enhancements: [
              { InstanceType: "PostgreSQL" },
              { ConnectionType: "awsVPCPeering", instanceVPC: "vpc-0bb", appClusterVPC: "vpc-0aa" },
            ],
          },
          { name: "plain", port: 5432 },
        ],
      }),
    );
    assert.deepEqual(plan.connections, [
      { name: "pg", port: 6432, instanceVPC: "vpc-0bb", appClusterVPC: "vpc-0aa" },
      { name: "plain", port: 5432 },
    ]);
    assert.deepEqual(
      plan.ingress.map((r) => r.port),
      [5432, 6432],
    );
  });
});
