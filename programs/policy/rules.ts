import { Address4, Address6 } from "ip-address";

/**
 * The network-safety rules of the policy pack, as pure functions over a resource's type and
 * properties. The pack (index.ts) reports what they return; the unit tests run them over the
 * resources the mocked stacks register and over small programs built to break each rule.
 */

export interface ResourceView {
  type: string;
  props: Record<string, unknown>;
}

export interface NetworkRule {
  name: string;
  description: string;
  /** One message per violation; empty when the resource is fine or not this rule's concern. */
  check(resource: ResourceView): string[];
}

/** Well-known data-service ports: PostgreSQL, MySQL, Redis, RabbitMQ, MongoDB, Elasticsearch, SQL Server, Cassandra, Memcached. */
export const DATA_SERVICE_PORTS = [5432, 3306, 6379, 5671, 5672, 27017, 9200, 1433, 9042, 11211] as const;

/** One ingress permission, whatever the resource type it came from. */
export interface Ingress {
  /** "tcp", "udp", "icmp", or "all". */
  protocol: string;
  /** Inclusive port range; undefined means every port. */
  fromPort?: number;
  toPort?: number;
  /** Source CIDRs; "any" when the rule names no source at all (OpenStack's default). */
  sources: string[];
  /** The source is another security group, not an address range. */
  fromGroup: boolean;
}

const num = (v: unknown): number | undefined =>
  v === undefined || v === null || v === "" ? undefined : Number(v);

function protocolOf(v: unknown): string {
  const p = typeof v === "string" || typeof v === "number" ? String(v).toLowerCase() : "";
  if (p === "") return "all";
  if (p === "-1" || p === "any") return "all";
  if (p === "6") return "tcp";
  if (p === "17") return "udp";
  return p;
}

const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** The ingress permissions a resource grants, for every security group flavour we know. */
export function ingressOf(r: ResourceView): Ingress[] {
  const p = r.props;
  switch (r.type) {
    case "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule":
      return [
        {
          protocol: protocolOf(p.ipProtocol),
          fromPort: num(p.fromPort),
          toPort: num(p.toPort),
          sources: [p.cidrIpv4, p.cidrIpv6].filter((c): c is string => typeof c === "string"),
          fromGroup: !!p.referencedSecurityGroupId || !!p.prefixListId,
        },
      ];
    case "aws:ec2/securityGroupRule:SecurityGroupRule":
      if (p.type !== "ingress") return [];
      return [awsInline(p)];
    case "aws:ec2/securityGroup:SecurityGroup":
      return (Array.isArray(p.ingress) ? (p.ingress as Record<string, unknown>[]) : []).map(awsInline);
    case "openstack:networking/secGroupRule:SecGroupRule":
      if (p.direction !== "ingress") return [];
      return [
        {
          protocol: protocolOf(p.protocol),
          fromPort: num(p.portRangeMin),
          toPort: num(p.portRangeMax),
          sources: typeof p.remoteIpPrefix === "string" && p.remoteIpPrefix ? [p.remoteIpPrefix] : [],
          fromGroup: !!p.remoteGroupId,
        },
      ];
    default:
      return [];
  }
}

function awsInline(p: Record<string, unknown>): Ingress {
  return {
    protocol: protocolOf(p.protocol),
    fromPort: num(p.fromPort),
    toPort: num(p.toPort),
    sources: [...list(p.cidrBlocks), ...list(p.ipv6CidrBlocks)],
    fromGroup: !!p.sourceSecurityGroupId || !!p.self || list(p.securityGroups).length > 0,
  };
}

/** Prefix length of a CIDR, or undefined when it is not one. */
function prefixOf(cidr: string): number | undefined {
  if (Address4.isValid(cidr) && cidr.includes("/")) return new Address4(cidr).subnetMask;
  if (Address6.isValid(cidr) && cidr.includes("/")) return new Address6(cidr).subnetMask;
  return undefined;
}

const isWorld = (cidr: string) => prefixOf(cidr) === 0;

function describePorts(i: Ingress): string {
  if (i.protocol === "all") return "all protocols and ports";
  if (i.fromPort === undefined || i.toPort === undefined) return `every ${i.protocol} port`;
  return i.fromPort === i.toPort ? `${i.protocol}/${i.fromPort}` : `${i.protocol}/${i.fromPort}-${i.toPort}`;
}

function coversDataServicePort(i: Ingress): number | undefined {
  if (i.protocol !== "tcp" && i.protocol !== "all") return undefined;
  return DATA_SERVICE_PORTS.find(
    (port) =>
      (i.fromPort === undefined || i.fromPort <= port) && (i.toPort === undefined || port <= i.toPort),
  );
}

export const ingressSinglePort: NetworkRule = {
  name: "klutch-ingress-single-port",
  description: "Security group ingress names one protocol (tcp or udp) and exactly one port.",
  check: (r) =>
    ingressOf(r)
      .filter((i) => !i.fromGroup)
      .filter(
        (i) =>
          (i.protocol !== "tcp" && i.protocol !== "udp") ||
          i.fromPort === undefined ||
          i.fromPort !== i.toPort,
      )
      .map((i) => `ingress allows ${describePorts(i)}; open one tcp or udp port per rule`),
};

export const noWorldDataServiceIngress: NetworkRule = {
  name: "klutch-no-world-ingress-on-data-service-ports",
  description: "No ingress from 0.0.0.0/0, ::/0 or an unspecified source reaches a data-service port.",
  check: (r) =>
    ingressOf(r)
      .filter((i) => !i.fromGroup)
      .flatMap((i) => {
        const port = coversDataServicePort(i);
        if (port === undefined) return [];
        const open = i.sources.length === 0 ? ["any source"] : i.sources.filter(isWorld);
        return open.map((s) => `data-service port ${port} (${describePorts(i)}) is open to ${s}`);
      }),
};

/** Anything shorter than a /8 is not "the consumer's network". */
export const MIN_SOURCE_PREFIX = 8;

export const ingressFromConsumerNetwork: NetworkRule = {
  name: "klutch-ingress-from-consumer-network",
  description: `Every address-based ingress names its source network, at least a /${MIN_SOURCE_PREFIX}: the consumer's CIDR, never the internet.`,
  check: (r) =>
    ingressOf(r)
      .filter((i) => !i.fromGroup)
      .flatMap((i) => {
        if (i.sources.length === 0)
          return [`ingress ${describePorts(i)} names no source (OpenStack then admits any address)`];
        return i.sources
          .filter((s) => {
            const prefix = prefixOf(s);
            return prefix === undefined || prefix < MIN_SOURCE_PREFIX;
          })
          .map(
            (s) =>
              `ingress ${describePorts(i)} from ${s} is wider than a consumer network (/${MIN_SOURCE_PREFIX} or longer)`,
          );
      }),
};

export const peeringRoutesSpecific: NetworkRule = {
  name: "klutch-peering-routes-to-peer-cidr-only",
  description: "Routes over a VPC peering target the peer's CIDR, never a default route or a huge range.",
  check: (r) => {
    if (r.type !== "aws:ec2/route:Route" || !r.props.vpcPeeringConnectionId) return [];
    const dest = [r.props.destinationCidrBlock, r.props.destinationIpv6CidrBlock].filter(
      (d): d is string => typeof d === "string" && d !== "",
    );
    if (dest.length === 0) return ["route over a peering names no destination CIDR"];
    return dest
      .filter((d) => {
        const prefix = prefixOf(d);
        return prefix === undefined || prefix < MIN_SOURCE_PREFIX;
      })
      .map((d) => `route to ${d} over a VPC peering would send far more than the peer's network there`);
  },
};

/**
 * Annotations that make a cloud's load balancer internal (no internet-facing address), as the
 * controllers that read them document them:
 * - AWS Load Balancer Controller, "Service annotations"
 *   (https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/):
 *   `service.beta.kubernetes.io/aws-load-balancer-scheme` is `internal` (its default when the
 *   controller reconciles the Service) or `internet-facing`; `…/aws-load-balancer-internal` is a
 *   boolean, deprecated in favour of the scheme, and also the in-tree AWS provider's annotation.
 * - cloud-provider-openstack, pkg/openstack (`ServiceAnnotationLoadBalancerInternal`,
 *   https://pkg.go.dev/k8s.io/cloud-provider-openstack/pkg/openstack) and its
 *   docs/openstack-cloud-controller-manager/expose-applications-using-loadbalancer-type-service.md:
 *   `service.beta.kubernetes.io/openstack-internal-load-balancer: "true"`, default false.
 * Only the explicit internal values count: the AWS scheme's default applies to the AWS Load
 * Balancer Controller only (the in-tree controller and EKS Auto Mode differ), so a Service that
 * names no scheme is treated as internet-facing.
 */
export const INTERNAL_LB_ANNOTATIONS: Readonly<Record<string, string>> = {
  "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
  "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
  "service.beta.kubernetes.io/openstack-internal-load-balancer": "true",
};

/** The explicit, reviewed opt-in for a load balancer that must be reachable from anywhere. */
export const PUBLIC_ENDPOINT_ANNOTATION = "klutch.anynines.com/public-endpoint";

/**
 * The annotation form of `spec.loadBalancerSourceRanges` (comma-separated CIDRs): Kubernetes'
 * cloud-provider helpers (k8s.io/cloud-provider service/helpers GetLoadBalancerSourceRanges) use
 * it when the spec field is empty, and the AWS Load Balancer Controller lists it too.
 */
export const SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges";

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The source ranges a LoadBalancer Service admits: the spec field, else the annotation. */
function loadBalancerSourceRanges(
  spec: Record<string, unknown>,
  annotations: Record<string, unknown>,
): string[] {
  const fromSpec = list(spec.loadBalancerSourceRanges)
    .map((s) => s.trim())
    .filter(Boolean);
  if (fromSpec.length > 0) return fromSpec;
  const fromAnnotation = annotations[SOURCE_RANGES_ANNOTATION];
  return typeof fromAnnotation === "string"
    ? fromAnnotation
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

export const noWorldOpenLoadBalancer: NetworkRule = {
  name: "klutch-no-world-open-load-balancer",
  description:
    'A Kubernetes Service of type LoadBalancer admits only named networks (loadBalancerSourceRanges), is internal, or opts in with klutch.anynines.com/public-endpoint: "true".',
  check: (r) => {
    if (r.type !== "kubernetes:core/v1:Service") return [];
    const spec = record(r.props.spec);
    if (spec.type !== "LoadBalancer") return [];
    const metadata = record(r.props.metadata);
    const annotations = record(metadata.annotations);
    if (annotations[PUBLIC_ENDPOINT_ANNOTATION] === "true") return [];
    if (Object.entries(INTERNAL_LB_ANNOTATIONS).some(([key, value]) => annotations[key] === value)) return [];
    const name = typeof metadata.name === "string" ? `Service ${metadata.name}` : "a LoadBalancer Service";
    const fix =
      `set spec.loadBalancerSourceRanges to the consumers' CIDRs, make it internal (${Object.entries(
        INTERNAL_LB_ANNOTATIONS,
      )
        .map(([k, v]) => `${k}: "${v}"`)
        .join(", ")}), ` + `or opt in with ${PUBLIC_ENDPOINT_ANNOTATION}: "true"`;
    const ranges = loadBalancerSourceRanges(spec, annotations);
    if (ranges.length === 0)
      return [`${name} is a load balancer open to the internet (no source ranges); ${fix}`];
    return ranges
      .filter((c) => {
        const prefix = prefixOf(c);
        return prefix === undefined || prefix < MIN_SOURCE_PREFIX;
      })
      .map((c) =>
        prefixOf(c) === undefined
          ? `${name} has source range "${c}", which is not a CIDR; ${fix}`
          : `${name} admits ${c}, wider than a consumer network (/${MIN_SOURCE_PREFIX} or longer); ${fix}`,
      );
  },
};

/**
 * A Service without selector forwards to whatever addresses its EndpointSlices name (the
 * proxy's kernel hop: network/proxy/kernel-path.ts), with no pod of its own for a NetworkPolicy
 * to guard. As a NodePort, kube-proxy applies no source ranges to its node ports, so every
 * address that reaches a node reaches the instance: allowed only as a reviewed public endpoint
 * (what the environment's checks require of a NodePort kernel path).
 */
export const noOpenSelectorlessNodePort: NetworkRule = {
  name: "klutch-no-open-selectorless-node-port",
  description: `A NodePort Service without selector (a kernel path) admits every address that reaches a node: only with ${PUBLIC_ENDPOINT_ANNOTATION}: "true".`,
  check: (r) => {
    if (r.type !== "kubernetes:core/v1:Service") return [];
    const spec = record(r.props.spec);
    if (spec.type !== "NodePort" || Object.keys(record(spec.selector)).length > 0) return [];
    const metadata = record(r.props.metadata);
    if (record(metadata.annotations)[PUBLIC_ENDPOINT_ANNOTATION] === "true") return [];
    const name = typeof metadata.name === "string" ? `Service ${metadata.name}` : "a NodePort Service";
    return [
      `${name} is a NodePort without selector: its node ports forward every address that reaches a node to its endpoints, and no NetworkPolicy guards them; use type LoadBalancer with loadBalancerSourceRanges or ClusterIP, or opt in with ${PUBLIC_ENDPOINT_ANNOTATION}: "true"`,
    ];
  },
};

export const NETWORK_RULES: readonly NetworkRule[] = [
  ingressSinglePort,
  noWorldDataServiceIngress,
  ingressFromConsumerNetwork,
  peeringRoutesSpecific,
  noWorldOpenLoadBalancer,
  noOpenSelectorlessNodePort,
];

/** Every violation of every rule over a set of resources, as `rule: message`. */
export function violations(
  resources: readonly ResourceView[],
): { rule: string; type: string; message: string }[] {
  return resources.flatMap((r) =>
    NETWORK_RULES.flatMap((rule) =>
      rule.check(r).map((message) => ({ rule: rule.name, type: r.type, message })),
    ),
  );
}
