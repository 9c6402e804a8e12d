import { strict as assert } from "node:assert";
import { parse } from "yaml";
import { klutchProgram } from "../../programs/stack/program";
import {
  MockedRun,
  Registered,
  mockPulumi,
  parentTypeOf,
  registeredUrns,
  settle,
  SECRET_SIG,
  SECRET_MARKER,
} from "../../test/helpers/mocks";
import { stackSettings } from "../../test/helpers/stacks";

// Pulumi's wire signature for secret values (sdk/nodejs/runtime/rpc.ts specialSigKey/specialSecretSig).
const ROUTE = "aws:ec2/route:Route";

async function runStack(settings: Record<string, unknown>): Promise<MockedRun> {
  const run = mockPulumi(settings, "aws-example");
  klutchProgram();
  for (let i = 0; i < 4; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
  return run;
}

const names = (rs: Registered[]) => rs.map((r) => r.name).sort();
const providerName = (r: Registered) => r.provider?.split("::")[3];

describe("aws-example stack (mocks)", function () {
  this.timeout(30000);
  let run: MockedRun;
  before(async () => {
    run = await runStack(stackSettings("aws-example"));
  });

  it("registers exactly the clusters, networks and IAM the three clusters need", () => {
    const count = (type: string) => run.ofType(type).length;
    assert.deepEqual(names(run.ofType("klutch:cluster:AwsCluster")), [
      "aws-example-app-1",
      "aws-example-app-2",
      "aws-example-control-plane",
    ]);
    // One AWS provider per cluster plus the accepter's own for the cross-account peering.
    assert.deepEqual(names(run.ofType("pulumi:providers:aws")), [
      "aws-example-app-1-aws",
      "aws-example-app-2-aws",
      "aws-example-app-2-peering-accepter-aws",
      "aws-example-control-plane-aws",
    ]);
    assert.equal(count("aws:ec2/vpc:Vpc"), 3);
    // Zones: control plane 3, app clusters 2 each; a private and a public subnet per zone.
    assert.equal(count("aws:ec2/subnet:Subnet"), 2 * (3 + 2 + 2));
    assert.equal(count("aws:ec2/internetGateway:InternetGateway"), 3);
    assert.equal(count("aws:ec2/natGateway:NatGateway"), 3);
    assert.equal(count("aws:ec2/eip:Eip"), 3);
    assert.equal(count("aws:ec2/routeTable:RouteTable"), 3 + 1 + (2 + 1) + (2 + 1));
    assert.equal(count("aws:ec2/routeTableAssociation:RouteTableAssociation"), 2 * (3 + 2 + 2));
    assert.equal(count("aws:eks/cluster:Cluster"), 3);
    assert.equal(count("aws:eks/nodeGroup:NodeGroup"), 3);
    assert.equal(count("aws:iam/role:Role"), 6);
    assert.equal(count("aws:iam/rolePolicyAttachment:RolePolicyAttachment"), 3 * 4);
    // Defaults (1 public + 1 per private table) and peering routes (both sides, below).
    const defaults = run.ofType(ROUTE).filter((r) => r.inputs.destinationCidrBlock === "0.0.0.0/0");
    assert.equal(defaults.length, 4 + 3 + 3);
    assert.ok(
      defaults.every((r) => !r.inputs.vpcPeeringConnectionId),
      "no default route over a peering",
    );
  });

  it("builds each VPC from the configured CIDR in the zones AWS reports", () => {
    const vpc = run.ofType("aws:ec2/vpc:Vpc").find((r) => r.name === "aws-example-app-2-network-vpc");
    assert.equal(vpc?.inputs.cidrBlock, "10.30.0.0/16");
    assert.equal(vpc?.inputs.enableDnsHostnames, true);
    const subnets = run
      .ofType("aws:ec2/subnet:Subnet")
      .filter((r) => r.name.startsWith("aws-example-app-2-"));
    assert.deepEqual(subnets.map((s) => [s.name, s.inputs.cidrBlock, s.inputs.availabilityZone]).sort(), [
      ["aws-example-app-2-network-private-0", "10.30.0.0/18", "eu-west-1a"],
      ["aws-example-app-2-network-private-1", "10.30.64.0/18", "eu-west-1b"],
      ["aws-example-app-2-network-public-0", "10.30.128.0/20", "eu-west-1a"],
      ["aws-example-app-2-network-public-1", "10.30.144.0/20", "eu-west-1b"],
    ]);
    const node = run.ofType("aws:eks/nodeGroup:NodeGroup").find((r) => r.name.includes("app-2"));
    assert.deepEqual(node?.inputs.scalingConfig, { minSize: 1, desiredSize: 2, maxSize: 3 });
    assert.deepEqual(node?.inputs.instanceTypes, ["t3.large"]);
    assert.deepEqual(node?.inputs.subnetIds, [
      "aws-example-app-2-network-private-0-id",
      "aws-example-app-2-network-private-1-id",
    ]);
    const provider = run.ofType("pulumi:providers:aws").find((r) => r.name === "aws-example-app-2-aws");
    assert.equal(provider?.inputs.region, "eu-west-1");
    assert.match(JSON.stringify(provider?.inputs.assumeRoles), /role\/klutch-provisioner/);
  });

  it("peers each app VPC with one route per route table per peer CIDR on both sides", () => {
    const peerings = run.ofType("aws:ec2/vpcPeeringConnection:VpcPeeringConnection");
    assert.deepEqual(names(peerings), [
      "aws-example-app-1-peering-peering",
      "aws-example-app-2-peering-peering",
    ]);
    const tables = (cluster: string) =>
      run
        .ofType("aws:ec2/routeTable:RouteTable")
        .filter((r) => r.name.startsWith(`aws-example-${cluster}-network-`))
        .map((r) => `${r.name}-id`)
        .sort();
    const cases = [
      { app: "app-1", appCidr: "10.20.0.0/16" },
      { app: "app-2", appCidr: "10.30.0.0/16" },
    ];
    for (const { app, appCidr } of cases) {
      const peeringId = `aws-example-${app}-peering-peering-id`;
      const routes = run.ofType(ROUTE).filter((r) => r.inputs.vpcPeeringConnectionId === peeringId);
      const toCp = routes.filter((r) => r.inputs.destinationCidrBlock === "10.10.0.0/16");
      const toApp = routes.filter((r) => r.inputs.destinationCidrBlock === appCidr);
      assert.equal(routes.length, toCp.length + toApp.length, "no route to any other CIDR");
      assert.deepEqual(toCp.map((r) => r.inputs.routeTableId).sort(), tables(app), `${app} side`);
      assert.deepEqual(
        toApp.map((r) => r.inputs.routeTableId).sort(),
        tables("control-plane"),
        "accepter side",
      );
    }
  });

  it("accepts the cross-account peering with the accepter's own provider, the same-account one automatically", () => {
    const peerings = run.ofType("aws:ec2/vpcPeeringConnection:VpcPeeringConnection");
    const same = peerings.find((p) => p.name.includes("app-1"))!;
    const cross = peerings.find((p) => p.name.includes("app-2"))!;
    assert.equal(same.inputs.autoAccept, true);
    assert.equal(same.inputs.peerOwnerId, undefined);
    assert.equal(providerName(same), "aws-example-app-1-aws");
    assert.equal(cross.inputs.autoAccept, false);
    assert.equal(cross.inputs.peerOwnerId, "111111111111");
    assert.equal(cross.inputs.peerRegion, "eu-central-1");
    assert.equal(providerName(cross), "aws-example-app-2-aws");

    const accepters = run.ofType("aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter");
    assert.equal(accepters.length, 1, "only the cross-account peering needs an accepter");
    assert.equal(providerName(accepters[0]!), "aws-example-app-2-peering-accepter-aws");
    assert.equal(accepters[0]!.inputs.vpcPeeringConnectionId, "aws-example-app-2-peering-peering-id");
    const accepterProvider = run.ofType("pulumi:providers:aws").find((p) => p.name.endsWith("accepter-aws"))!;
    assert.match(
      JSON.stringify(accepterProvider.inputs.assumeRoles),
      /111111111111:role\/klutch-peering-accepter/,
    );
    assert.equal(accepterProvider.inputs.region, "eu-central-1");

    // Every accepter-side resource of the cross-account path uses the accepter's provider.
    const accepterSide = run.resources.filter(
      (r) =>
        r.name.startsWith("aws-example-app-2-peering-") &&
        (r.name.includes("-accepter-") ||
          r.type.includes("securityGroup") ||
          r.type.includes("SecurityGroup")),
    );
    assert.ok(accepterSide.length >= 5);
    for (const r of accepterSide.filter((r) => !r.type.startsWith("pulumi:providers"))) {
      assert.equal(providerName(r), "aws-example-app-2-peering-accepter-aws", `${r.type} ${r.name}`);
    }
    // DNS resolution on both sides, each set by its owner.
    const dns = run.ofType("aws:ec2/peeringConnectionOptions:PeeringConnectionOptions");
    assert.deepEqual(names(dns), [
      "aws-example-app-1-peering-dns",
      "aws-example-app-2-peering-accepter-dns",
      "aws-example-app-2-peering-requester-dns",
    ]);
    const crossAccepterDns = dns.find((d) => d.name === "aws-example-app-2-peering-accepter-dns")!;
    assert.deepEqual(crossAccepterDns.inputs.accepter, { allowRemoteVpcDnsResolution: true });
    assert.equal(crossAccepterDns.inputs.requester, undefined);
    assert.equal(providerName(crossAccepterDns), "aws-example-app-2-peering-accepter-aws");
  });

  it("opens only the data-service port to the app cluster's CIDR", () => {
    const rules = run.ofType("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule");
    assert.deepEqual(
      rules
        .map((r) => [r.name, r.inputs.ipProtocol, r.inputs.fromPort, r.inputs.toPort, r.inputs.cidrIpv4])
        .sort(),
      [
        ["aws-example-app-1-peering-tcp-5432-10-20-0-0-16", "tcp", 5432, 5432, "10.20.0.0/16"],
        ["aws-example-app-2-peering-tcp-5432-10-30-0-0-16", "tcp", 5432, 5432, "10.30.0.0/16"],
      ],
    );
    const groups = run.ofType("aws:ec2/securityGroup:SecurityGroup");
    assert.equal(groups.length, 2);
    for (const g of groups) {
      assert.equal(g.inputs.vpcId, "aws-example-control-plane-network-vpc-id");
      assert.equal(g.inputs.ingress, undefined, "no inline rules");
    }
    assert.equal(run.ofType("aws:ec2/securityGroupRule:SecurityGroupRule").length, 0);
  });

  it("hands every kubeconfig on as a secret with exec auth", () => {
    const providers = run.ofType("pulumi:providers:kubernetes");
    // One per cluster, and the control plane's second one for the bridge settings.
    assert.deepEqual(providers.map((p) => p.name).sort(), [
      "aws-example-app-1-provider",
      "aws-example-app-2-provider",
      "aws-example-bridge-settings-provider",
      "aws-example-control-plane-provider",
    ]);
    for (const p of providers) {
      assert.equal(p.inputs.kubeconfig[SECRET_SIG], SECRET_MARKER, p.name);
      const kc = parse(p.inputs.kubeconfig.value as string);
      assert.equal(kc.users[0].user.exec.command, "aws");
      assert.match(kc.clusters[0].cluster.server, /\.eks\.example\.test$/);
    }
    const app2 = providers.find((p) => p.name === "aws-example-app-2-provider")!;
    assert.match(app2.inputs.kubeconfig.value, /--role-arn/);
  });

  it("installs Klutch's function and, on it, the network-aware ServiceBinding compositions for a8s", () => {
    const fn = run
      .ofType("kubernetes:pkg.crossplane.io/v1:Function")
      .find((f) => f.inputs.metadata.name === "function-klutch");
    assert.equal(
      fn?.inputs.spec.package,
      "111111111111.dkr.ecr.eu-central-1.amazonaws.com/klutch/function-klutch:v0.1.0",
    );
    assert.match(providerName(fn) ?? "", /^aws-example-control-plane-provider$/);
    const [bindings, ...more] = run.ofType("klutch:dataservices:A8sNetworkBindings");
    assert.deepEqual(more, []);
    const compositions = run
      .ofType("kubernetes:apiextensions.crossplane.io/v1:Composition")
      .filter((c) => c.inputs.spec.compositeTypeRef.kind === "XServiceBinding");
    // The connector's default, and one per implementation offered (the default, awsVpcPeering
    // and NOOP), named in lower case as Kubernetes names must be.
    assert.deepEqual(compositions.map((c) => c.inputs.metadata.name).sort(), [
      "a8s-servicebinding-network",
      "a8s-servicebinding-network-awsvpcpeering",
      "a8s-servicebinding-network-noop",
      "a8s-servicebinding-network-proxy",
    ]);
    const peering = compositions.find((c) => c.inputs.metadata.name.endsWith("-awsvpcpeering"));
    // Asks for the connector's composition of that implementation, by its (lower-case) name.
    assert.equal(peering?.inputs.spec.pipeline[1].input.implementation, "awsvpcpeering");
    for (const c of compositions) {
      assert.match(c.name, new RegExp(`^${bindings!.name}-`));
      assert.deepEqual(
        c.inputs.spec.pipeline.map((s: any) => [s.functionRef.name, s.input.kind]),
        [
          ["function-klutch", "A8sServiceBinding"],
          ["function-klutch", "NetworkConnection"],
        ],
      );
    }
  });

  it("parents every cloud resource under its component", () => {
    const urns = registeredUrns().filter((u) =>
      /^(aws:|pulumi:providers:aws)/.test((u.split("::")[2] ?? "").split("$").pop() ?? ""),
    );
    assert.ok(urns.length > 90, `${urns.length} cloud resources`);
    const expectedParent: [RegExp, string][] = [
      [
        /\$aws:ec2\/(vpcPeeringConnection|vpcPeeringConnectionAccepter|peeringConnectionOptions|securityGroup):/,
        "klutch:network:VpcPeering",
      ],
      [/\$aws:vpc\/securityGroupIngressRule:/, "klutch:network:VpcPeering"],
      [/\$aws:(eks|iam)\//, "klutch:aws:EksCluster"],
      [
        /\$aws:ec2\/(vpc|subnet|internetGateway|natGateway|eip|routeTable|routeTableAssociation):/,
        "klutch:aws:ClusterVpc",
      ],
    ];
    for (const urn of urns) {
      const parent = parentTypeOf(urn);
      assert.ok(parent?.startsWith("klutch:"), `${urn} has no klutch component parent`);
      for (const [pattern, type] of expectedParent) if (pattern.test(urn)) assert.equal(parent, type, urn);
    }
    // Peering routes sit under the peering, default routes under the VPC.
    for (const urn of urns.filter((u) => u.includes("$aws:ec2/route:Route::"))) {
      const name = urn.split("::").pop() ?? "";
      assert.equal(
        parentTypeOf(urn),
        name.includes("-peering-") ? "klutch:network:VpcPeering" : "klutch:aws:ClusterVpc",
        urn,
      );
    }
  });
});

describe("aws stack with an adopted VPC and cluster (mocks)", function () {
  this.timeout(30000);
  it("creates no VPC or EKS resources for it and routes into the listed route tables", async () => {
    const settings = stackSettings("aws-example");
    settings.appClusters = [settings.appClusters[0]];
    Object.assign(settings.appClusters[0].aws, {
      existingVpcId: "vpc-0abc",
      existingClusterName: "legacy",
      existingRouteTableIds: ["rtb-01", "rtb-02"],
    });
    const run = await runStack(settings);
    assert.equal(run.ofType("aws:ec2/vpc:Vpc").length, 1, "only the control plane's");
    assert.equal(run.ofType("aws:eks/cluster:Cluster").length, 1, "only the control plane's");
    assert.equal(run.ofType("aws:ec2/subnet:Subnet").filter((s) => s.name.includes("app-1")).length, 0);
    const peering = run.ofType("aws:ec2/vpcPeeringConnection:VpcPeeringConnection")[0]!;
    assert.equal(peering.inputs.vpcId, "vpc-0abc");
    const toCp = run
      .ofType(ROUTE)
      .filter((r) => r.inputs.vpcPeeringConnectionId && r.inputs.destinationCidrBlock === "10.10.0.0/16");
    assert.deepEqual(toCp.map((r) => r.inputs.routeTableId).sort(), ["rtb-01", "rtb-02"]);
    const kc = run
      .ofType("pulumi:providers:kubernetes")
      .find((p) => p.name === "aws-example-app-1-provider")!;
    assert.equal(kc.inputs.kubeconfig[SECRET_SIG], SECRET_MARKER);
    assert.match(kc.inputs.kubeconfig.value, /server: https:\/\/legacy\.eks\.example\.test/);
  });
});
