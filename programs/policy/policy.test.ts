import { strict as assert } from "node:assert";
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { networkPolicies } from "./policies";
import {
  INTERNAL_LB_ANNOTATIONS,
  NETWORK_RULES,
  PUBLIC_ENDPOINT_ANNOTATION,
  ResourceView,
  noOpenSelectorlessNodePort,
  noWorldOpenLoadBalancer,
  violations,
} from "./rules";
import { KernelPath } from "../../network/proxy/kernel-path";
import { VpcPeering } from "../../network/aws-vpc-peering/vpc-peering";
import { TcpProxy } from "../../network/proxy/tcp-proxy";
import { portAllocationProvider } from "../../network/proxy/port-allocation";
import {
  INTERNAL_LB_ANNOTATIONS as PROXY_INTERNAL_LB_ANNOTATIONS,
  PUBLIC_ENDPOINT_ANNOTATION as PROXY_PUBLIC_ENDPOINT_ANNOTATION,
} from "../../network/contract/exposure";
import type { ProxyExposure } from "../../network/proxy/model/exposure";
import { klutchProgram } from "../stack/program";
import { MockedRun, mockPulumi, settle } from "../../test/helpers/mocks";
import { stackSettings } from "../../test/helpers/stacks";

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
  options: Parameters<typeof mockPulumi>[2] = {},
): Promise<ResourceView[]> {
  const run: MockedRun = mockPulumi(config, stack, options);
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

  describe("klutch-no-world-open-load-balancer: a LoadBalancer Service is not open to the internet", () => {
    const RULE = "klutch-no-world-open-load-balancer";
    /** One Service on a Kubernetes provider, as the policy sees it after registration. */
    const service = async (spec: Record<string, unknown>, annotations?: Record<string, string>) =>
      captured(() => {
        const provider = new k8s.Provider("k", { kubeconfig: "fake" });
        new k8s.core.v1.Service(
          "svc",
          {
            metadata: { name: "proxy", namespace: "klutch-network", ...(annotations ? { annotations } : {}) },
            spec: { selector: { app: "proxy" }, ports: [{ port: 5432 }], ...spec },
          },
          { provider },
        );
      });

    it("refuses one without source ranges, naming the Service and every way to fix it", async () => {
      const resources = await service({ type: "LoadBalancer" });
      assert.deepEqual(firing(resources), [RULE]);
      const [message] = violations(resources).map((v) => v.message);
      assert.match(message!, /^Service proxy is a load balancer open to the internet \(no source ranges\)/);
      for (const fix of [
        "spec.loadBalancerSourceRanges",
        'service.beta.kubernetes.io/aws-load-balancer-scheme: "internal"',
        'service.beta.kubernetes.io/aws-load-balancer-internal: "true"',
        'service.beta.kubernetes.io/openstack-internal-load-balancer: "true"',
        'klutch.anynines.com/public-endpoint: "true"',
      ]) {
        assert.ok(message!.includes(fix), `the message names ${fix}: ${message}`);
      }
    });

    for (const world of ["0.0.0.0/0", "::/0"]) {
      it(`refuses source ranges that include ${world}`, async () => {
        const resources = await service({
          type: "LoadBalancer",
          loadBalancerSourceRanges: ["10.20.0.0/16", world],
        });
        assert.deepEqual(
          violations(resources).map((v) => [v.rule, v.message.split(";")[0]]),
          [[RULE, `Service proxy admits ${world}, wider than a consumer network (/8 or longer)`]],
        );
      });
    }

    it("refuses a range wider than a consumer network and one that is not a CIDR", async () => {
      const resources = await service({
        type: "LoadBalancer",
        loadBalancerSourceRanges: ["0.0.0.0/1", "128.0.0.0/1", "10.1.2.3"],
      });
      assert.deepEqual(
        violations(resources).map((v) => v.message.split(";")[0]),
        [
          "Service proxy admits 0.0.0.0/1, wider than a consumer network (/8 or longer)",
          "Service proxy admits 128.0.0.0/1, wider than a consumer network (/8 or longer)",
          'Service proxy has source range "10.1.2.3", which is not a CIDR',
        ],
      );
    });

    it("admits one limited to the consumers' networks, by the spec field or its annotation form", async () => {
      assert.deepEqual(
        firing(
          await service({ type: "LoadBalancer", loadBalancerSourceRanges: ["10.20.0.0/16", "fd00:20::/48"] }),
        ),
        [],
      );
      assert.deepEqual(
        firing(
          await service(
            { type: "LoadBalancer" },
            { "service.beta.kubernetes.io/load-balancer-source-ranges": "10.20.0.0/16, 10.30.0.0/16" },
          ),
        ),
        [],
      );
      assert.deepEqual(
        firing(
          await service(
            { type: "LoadBalancer" },
            { "service.beta.kubernetes.io/load-balancer-source-ranges": "10.20.0.0/16,0.0.0.0/0" },
          ),
        ),
        [RULE],
      );
    });

    for (const [key, value] of Object.entries(INTERNAL_LB_ANNOTATIONS)) {
      it(`admits an internal load balancer (${key}: "${value}") and refuses the opposite value`, async () => {
        assert.deepEqual(firing(await service({ type: "LoadBalancer" }, { [key]: value })), []);
        const opposite = value === "internal" ? "internet-facing" : "false";
        assert.deepEqual(firing(await service({ type: "LoadBalancer" }, { [key]: opposite })), [RULE]);
      });
    }

    it(`admits the explicit opt-in ${PUBLIC_ENDPOINT_ANNOTATION}: "true" only`, async () => {
      assert.deepEqual(
        firing(await service({ type: "LoadBalancer" }, { [PUBLIC_ENDPOINT_ANNOTATION]: "true" })),
        [],
      );
      for (const other of ["false", "yes", ""]) {
        assert.deepEqual(
          firing(await service({ type: "LoadBalancer" }, { [PUBLIC_ENDPOINT_ANNOTATION]: other })),
          [RULE],
        );
      }
    });

    it("leaves ClusterIP and NodePort Services and other kinds alone", async () => {
      assert.deepEqual(firing(await service({ type: "ClusterIP" })), []);
      assert.deepEqual(firing(await service({ type: "NodePort" })), []);
      assert.deepEqual(firing(await service({})), []);
      assert.deepEqual(
        noWorldOpenLoadBalancer.check({
          type: "kubernetes:core/v1:ConfigMap",
          props: { spec: { type: "LoadBalancer" } },
        }),
        [],
      );
    });

    it("the TcpProxy's Service passes for every exposure it builds, and it refuses to build the open one", async () => {
      const exposures: ProxyExposure[] = [
        { sourceRanges: ["10.20.0.0/16"], internal: true, public: false },
        { sourceRanges: ["198.51.100.10/32"], internal: false, public: false },
        { sourceRanges: ["0.0.0.0/0"], internal: false, public: true },
      ];
      for (const exposure of exposures) {
        const resources = await captured(
          () => {
            new TcpProxy("np", {
              provider: new k8s.Provider("ds", { kubeconfig: "fake" }),
              namespace: "klutch-proxy",
              connections: [{ id: "team-a/orders-db", instanceHost: "10.50.0.10", port: 5432 }],
              portRange: { from: 31000, to: 31099 },
              exposure,
            });
          },
          {},
          "test",
          { dynamicProviders: { "pulumi-nodejs:dynamic/klutch:PortAllocation": portAllocationProvider } },
        );
        assert.ok(
          resources.some((r) => r.type === "kubernetes:core/v1:Service"),
          "the proxy registered its Service",
        );
        assert.deepEqual(violations(resources), [], JSON.stringify(exposure));
      }
      mockPulumi({});
      assert.throws(
        () =>
          new TcpProxy("np", {
            provider: new k8s.Provider("ds", { kubeconfig: "fake" }),
            namespace: "klutch-proxy",
            connections: [],
          }),
        /exposure is required for a LoadBalancer Service/,
      );
    });

    it("the rule and the proxy agree on the annotations that make a load balancer internal or public", () => {
      assert.deepEqual(INTERNAL_LB_ANNOTATIONS, PROXY_INTERNAL_LB_ANNOTATIONS);
      assert.equal(PUBLIC_ENDPOINT_ANNOTATION, PROXY_PUBLIC_ENDPOINT_ANNOTATION);
    });
  });

  it("the VpcPeering component refuses overlapping VPCs before registering anything, itself included", async () => {
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
      run.resources.map((r) => r.type).filter((t) => t !== "pulumi:providers:aws"),
      [],
    );
  });

  describe("klutch-no-open-selectorless-node-port", () => {
    const check = (spec: Record<string, unknown>, annotations: Record<string, string> = {}) =>
      noOpenSelectorlessNodePort.check({
        type: "kubernetes:core/v1:Service",
        props: { metadata: { name: "np-team-a-proxy", annotations }, spec },
      });

    it("refuses a selector-less NodePort unless it is a reviewed public endpoint", () => {
      assert.match(
        check({ type: "NodePort" })[0] ?? "",
        /Service np-team-a-proxy is a NodePort without selector/,
      );
      assert.deepEqual(check({ type: "NodePort" }, { [PUBLIC_ENDPOINT_ANNOTATION]: "true" }), []);
      assert.equal(check({ type: "NodePort" }, { [PUBLIC_ENDPOINT_ANNOTATION]: "false" }).length, 1);
    });

    it("leaves a NodePort with a selector (pods a NetworkPolicy guards), ClusterIP and LoadBalancer alone", () => {
      assert.deepEqual(check({ type: "NodePort", selector: { app: "haproxy" } }), []);
      assert.deepEqual(check({ type: "ClusterIP" }), []);
      assert.deepEqual(check({ type: "LoadBalancer", loadBalancerSourceRanges: ["10.0.0.0/16"] }), []);
    });

    /** What a KernelPath of that type and exposure registers. */
    const kernelPathResources = (
      serviceType: "ClusterIP" | "NodePort" | "LoadBalancer",
      exposure: ProxyExposure,
    ): Promise<ResourceView[]> =>
      captured(
        () => {
          new KernelPath("np", {
            provider: new k8s.Provider("ds", { kubeconfig: "fake" }),
            namespace: "klutch-proxy",
            connections: [{ id: "team-a/orders-db", instanceHost: "10.50.0.10", port: 5432 }],
            portRange: { from: 31000, to: 31099 },
            serviceType,
            exposure,
          });
        },
        {},
        "test",
        { dynamicProviders: { "pulumi-nodejs:dynamic/klutch:PortAllocation": portAllocationProvider } },
      );

    it("the KernelPath's Service passes for every exposure the environment allows it, and the rule catches the NodePort it refuses", async () => {
      const cases: { serviceType: "ClusterIP" | "NodePort" | "LoadBalancer"; exposure: ProxyExposure }[] = [
        { serviceType: "ClusterIP", exposure: { sourceRanges: [], internal: true, public: false } },
        {
          serviceType: "LoadBalancer",
          exposure: { sourceRanges: ["10.20.0.0/16"], internal: true, public: false },
        },
        { serviceType: "NodePort", exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true } },
      ];
      for (const { serviceType, exposure } of cases) {
        const resources = await kernelPathResources(serviceType, exposure);
        assert.ok(
          resources.some((r) => r.type === "kubernetes:core/v1:Service"),
          serviceType,
        );
        assert.deepEqual(violations(resources), [], serviceType);
      }
      // The NodePort one the environment refuses (not public) is what the rule catches.
      const open = await kernelPathResources("NodePort", {
        sourceRanges: ["10.20.0.0/16"],
        internal: true,
        public: false,
      });
      assert.deepEqual(
        violations(open).map((v) => v.rule),
        ["klutch-no-open-selectorless-node-port"],
      );
    });
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
