import { addressToString, cidrsOverlap, parseCidr } from "../../net/cidr";

/**
 * An OpenStack cluster's network, planned without Pulumi: the subnet's gateway and the
 * address pool Neutron hands out, leaving room at the top of the block for fixed addresses
 * (the router port another cluster's path attaches, gateway VMs).
 */

export interface OpenstackSubnetPlan {
  cidr: string;
  gatewayIp: string;
  allocationPool: { start: string; end: string };
  /** Addresses outside the pool, for ports this project places itself. */
  reserved: string[];
}

/** Addresses kept out of Neutron's pool at the top of each subnet. */
const RESERVED_AT_TOP = 8;

export function planOpenstackSubnet(cidr: string): OpenstackSubnetPlan {
  const r = parseCidr(cidr);
  if (r.prefix > 28) {
    throw new Error(`network.nodeCidr ${cidr} is too small for a cluster subnet; use at most a /28`);
  }
  const broadcast = r.last;
  const reservedFirst = broadcast - BigInt(RESERVED_AT_TOP);
  return {
    cidr,
    gatewayIp: addressToString(r.first + 1n),
    allocationPool: { start: addressToString(r.first + 2n), end: addressToString(reservedFirst - 1n) },
    reserved: Array.from({ length: RESERVED_AT_TOP }, (_, i) => addressToString(reservedFirst + BigInt(i))),
  };
}

/**
 * The fixed address, in the app cluster's subnet, of the port that attaches the data-service
 * router to that subnet (the first reserved address), so routes can name it as next hop.
 */
export function interconnectAddress(appCidr: string): string {
  const first = planOpenstackSubnet(appCidr).reserved[0];
  if (!first) throw new Error(`internal: no reserved address in ${appCidr}`);
  return first;
}

/** The gateway VM's fixed address in the data-service subnet (the second reserved address). */
export function gatewayVmAddress(dataCidr: string): string {
  const second = planOpenstackSubnet(dataCidr).reserved[1];
  if (!second) throw new Error(`internal: no reserved address in ${dataCidr}`);
  return second;
}

export interface RoutedPathPlan {
  /** The app router's extra route: to the data-service CIDR via the interconnect port. */
  appRoute: { destinationCidr: string; nextHop: string };
  interconnectIp: string;
}

/** Routing between an app cluster's subnet and the data-service subnet over the data-service router. */
export function planRoutedPath(appCidr: string, dataCidr: string): RoutedPathPlan {
  if (cidrsOverlap(appCidr, dataCidr)) {
    throw new Error(
      `network.nodeCidr ${appCidr} overlaps the data-service network ${dataCidr}; routed paths need disjoint CIDRs`,
    );
  }
  const interconnectIp = interconnectAddress(appCidr);
  return { appRoute: { destinationCidr: dataCidr, nextHop: interconnectIp }, interconnectIp };
}

export interface MagnumTemplateInput {
  /** Where errors point, e.g. `klutch:appClusters[0].openstack`. */
  label: string;
  image: string;
  flavor: string;
  masterFlavor: string;
  kubernetesVersion?: string;
  externalNetworkId?: string;
  /** Whether the template is given the cluster's own network and subnet (Magnum puts the nodes there). */
  hasFixedNetwork: boolean;
  dnsNameservers: readonly string[];
  keypair?: string;
}

export interface MagnumTemplatePlan {
  coe: "kubernetes";
  image: string;
  flavor: string;
  masterFlavor: string;
  externalNetworkId: string;
  networkDriver: "calico";
  dnsNameserver?: string;
  floatingIpEnabled: boolean;
  masterLbEnabled: boolean;
  labels: Record<string, string>;
}

/**
 * The Magnum cluster template. A template without an external network cannot give the API
 * a floating IP, and one without a fixed network would let Magnum create an unmanaged network
 * whose CIDR nobody validated; both are errors naming the setting.
 */
export function planMagnumTemplate(input: MagnumTemplateInput): MagnumTemplatePlan {
  const problems: string[] = [];
  if (!input.externalNetworkId)
    problems.push(
      `${input.label}.externalNetworkId: a Magnum template needs the external (floating IP) network`,
    );
  if (!input.hasFixedNetwork)
    problems.push(
      `${input.label}: a Magnum template needs the cluster's network and subnet (set network.nodeCidr so they are created, or existingNetwork.networkId and subnetId)`,
    );
  if (problems.length > 0) throw new Error(`Magnum cluster template: ${problems.join("; ")}`);
  return {
    coe: "kubernetes",
    image: input.image,
    flavor: input.flavor,
    masterFlavor: input.masterFlavor,
    externalNetworkId: input.externalNetworkId as string,
    networkDriver: "calico",
    ...(input.dnsNameservers[0] ? { dnsNameserver: input.dnsNameservers[0] } : {}),
    // Nodes stay private; only the API load balancer gets a floating IP.
    floatingIpEnabled: false,
    masterLbEnabled: true,
    labels: {
      ...(input.kubernetesVersion ? { kube_tag: input.kubernetesVersion } : {}),
      master_lb_floating_ip_enabled: "true",
      cloud_provider_enabled: "true",
    },
  };
}
