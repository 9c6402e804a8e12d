import { strict as assert } from "node:assert";
import { parse } from "yaml";
import { availabilityZoneProblem, pickAvailabilityZones } from "./aws/regions";
import { planVpcSubnets, vpcCidrProblem } from "./aws/subnets";
import { renderEksKubeconfig } from "./aws/kubeconfig";
import { IngressPlanError, planIngressRules } from "./ingress-rules";
import {
  gatewayVmAddress,
  planMagnumTemplate,
  planOpenstackSubnet,
  planRoutedPath,
} from "./openstack/network-plan";
import { cidrsOverlap } from "../net/cidr";

describe("AWS planners", () => {
  it("carves private and public subnets per zone, disjoint and inside the VPC", () => {
    const plan = planVpcSubnets("10.20.0.0/16", 3);
    assert.deepEqual(
      plan.private.map((s) => s.cidr),
      ["10.20.0.0/19", "10.20.32.0/19", "10.20.64.0/19"],
    );
    assert.deepEqual(
      plan.public.map((s) => s.cidr),
      ["10.20.128.0/21", "10.20.136.0/21", "10.20.144.0/21"],
    );
    const all = [...plan.private, ...plan.public].map((s) => s.cidr);
    for (const [i, a] of all.entries())
      for (const b of all.slice(i + 1)) assert.equal(cidrsOverlap(a, b), false, `${a} / ${b}`);
    assert.deepEqual(
      planVpcSubnets("10.0.0.0/24", 2).public.map((s) => s.cidr),
      ["10.0.0.128/28", "10.0.0.144/28"],
    );
  });

  it("rejects VPC CIDRs AWS or EKS cannot use", () => {
    assert.match(vpcCidrProblem("10.0.0.0/8", 2) ?? "", /\/16 to \/24/);
    assert.match(vpcCidrProblem("10.0.0.0/24", 3) ?? "", /too small for 3 availability zone/);
    assert.equal(vpcCidrProblem("10.0.0.0/24", 2), undefined);
  });

  it("knows how many zones a region has and picks zones in a stable order", () => {
    assert.match(availabilityZoneProblem("us-west-1", 3) ?? "", /us-west-1 has 2 availability zone/);
    assert.equal(availabilityZoneProblem("eu-central-1", 3), undefined);
    assert.equal(
      availabilityZoneProblem("xx-new-1", 6),
      undefined,
      "unknown regions are checked at run time",
    );
    assert.deepEqual(pickAvailabilityZones("r", ["r-c", "r-a", "r-b"], 2), ["r-a", "r-b"]);
    assert.throws(
      () => pickAvailabilityZones("r", ["r-a"], 2),
      /availabilityZoneCount: r offers this account 1 zone/,
    );
  });

  it("renders an exec-auth kubeconfig without any token", () => {
    const text = renderEksKubeconfig({
      clusterName: "prod-app-1",
      endpoint: "https://x.eks.amazonaws.com",
      certificateAuthorityData: "Q0E=",
      region: "eu-west-1",
      roleArn: "arn:aws:iam::222222222222:role/admin",
    });
    const doc = parse(text);
    assert.equal(doc["current-context"], "prod-app-1");
    assert.equal(doc.clusters[0].cluster.server, "https://x.eks.amazonaws.com");
    assert.deepEqual(doc.users[0].user.exec.args, [
      "eks",
      "get-token",
      "--cluster-name",
      "prod-app-1",
      "--region",
      "eu-west-1",
      "--role-arn",
      "arn:aws:iam::222222222222:role/admin",
    ]);
    assert.doesNotMatch(text, /token:/);
  });
});

describe("ingress rule planner", () => {
  it("plans one TCP rule per port and consumer CIDR, never the world", () => {
    assert.deepEqual(
      planIngressRules([5432, 5432, 3306], ["10.20.0.0/16"]).map((r) => r.key),
      ["tcp-3306-10-20-0-0-16", "tcp-5432-10-20-0-0-16"],
    );
    assert.throws(
      () => planIngressRules([5432], ["0.0.0.0/0"]),
      (e: IngressPlanError) => /whole internet/.test(e.message),
    );
    assert.throws(() => planIngressRules([5432], ["0.0.0.0/4"]), /huge range/);
    assert.throws(() => planIngressRules([], ["10.0.0.0/16"]), /no ports/);
  });
});

describe("OpenStack planners", () => {
  it("keeps the top of each subnet out of Neutron's pool for fixed ports", () => {
    const plan = planOpenstackSubnet("10.30.0.0/24");
    assert.equal(plan.gatewayIp, "10.30.0.1");
    assert.deepEqual(plan.allocationPool, { start: "10.30.0.2", end: "10.30.0.246" });
    assert.equal(plan.reserved[0], "10.30.0.247");
    assert.equal(gatewayVmAddress("10.30.0.0/24"), "10.30.0.248");
  });

  it("routes the data-service CIDR via the interconnect port and rejects overlaps", () => {
    assert.deepEqual(planRoutedPath("10.31.0.0/24", "10.30.0.0/24"), {
      appRoute: { destinationCidr: "10.30.0.0/24", nextHop: "10.31.0.247" },
      interconnectIp: "10.31.0.247",
    });
    assert.throws(
      () => planRoutedPath("10.30.0.0/16", "10.30.5.0/24"),
      /network\.nodeCidr 10\.30\.0\.0\/16 overlaps/,
    );
  });

  it("refuses a Magnum template without an external network or a fixed network", () => {
    const base = {
      label: "klutch:controlPlane.openstack",
      image: "fedora-coreos-40",
      flavor: "m1.large",
      masterFlavor: "m1.medium",
      dnsNameservers: ["9.9.9.9"],
    };
    assert.throws(
      () => planMagnumTemplate({ ...base, hasFixedNetwork: false }),
      /klutch:controlPlane\.openstack\.externalNetworkId: .*; klutch:controlPlane\.openstack: a Magnum template needs the cluster's network/,
    );
    const plan = planMagnumTemplate({ ...base, externalNetworkId: "ext", hasFixedNetwork: true });
    assert.equal(plan.coe, "kubernetes");
    assert.equal(plan.floatingIpEnabled, false, "nodes get no public addresses");
    assert.equal(plan.dnsNameserver, "9.9.9.9");
  });
});
