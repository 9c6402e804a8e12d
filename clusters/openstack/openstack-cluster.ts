import * as fs from "node:fs";
import * as k8s from "@pulumi/kubernetes";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { planMagnumTemplate } from "../../lib/cloud/openstack/network-plan";
import { OpenstackClusterConfig } from "../../lib/config/schema";
import { kubeconfigProvider } from "../../providers/kit/kubeconfig-provider";
import { ClusterAccess } from "../types";
import { ClusterNetwork } from "./cluster-network";

export interface OpenstackClusterArgs {
  /** The cluster's name in the environment config. */
  clusterName: string;
  openstack: OpenstackClusterConfig;
  /** network.nodeCidr. */
  cidr: string;
  /** An existing cluster's kubeconfig file: no Magnum cluster is created. */
  kubeconfigPath?: string;
  kubeconfigContext?: string;
}

/** What network paths need to know about an OpenStack cluster's network. */
export interface OpenstackNetwork {
  provider: openstack.Provider;
  cidr: string;
  externalNetworkId: string;
  networkId: pulumi.Output<string>;
  subnetId: pulumi.Output<string>;
  routerId: pulumi.Output<string>;
}

/**
 * A cluster on OpenStack: its own provider (credentials from the usual OS_* environment or
 * clouds.yaml), its network, and a Magnum cluster template and cluster, or an existing
 * cluster reached by its kubeconfig. The kubeconfig is a Pulumi secret either way.
 */
export class OpenstackCluster extends pulumi.ComponentResource implements ClusterAccess {
  public readonly clusterName: string;
  public readonly provider: k8s.Provider;
  public readonly kubeconfig: pulumi.Output<string>;
  public readonly network: OpenstackNetwork;

  constructor(name: string, args: OpenstackClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:cluster:OpenstackCluster", name, {}, opts);
    this.clusterName = args.clusterName;
    const o = args.openstack;
    const osProvider = new openstack.Provider(
      `${name}-openstack`,
      { ...(o.region ? { region: o.region } : {}) },
      { parent: this },
    );
    const net = new ClusterNetwork(
      `${name}-network`,
      {
        cidr: args.cidr,
        externalNetworkId: o.externalNetworkId,
        dnsNameservers: o.dnsNameservers,
        provider: osProvider,
        existing: o.existingNetwork,
      },
      { parent: this },
    );
    this.network = {
      provider: osProvider,
      cidr: args.cidr,
      externalNetworkId: o.externalNetworkId,
      networkId: net.networkId,
      subnetId: net.subnetId,
      routerId: net.routerId,
    };

    if (args.kubeconfigPath) {
      this.kubeconfig = pulumi.secret(fs.readFileSync(args.kubeconfigPath, "utf8"));
    } else {
      const plan = planMagnumTemplate({
        label: "openstack",
        image: o.image,
        flavor: o.flavor,
        masterFlavor: o.masterFlavor,
        kubernetesVersion: o.kubernetesVersion,
        externalNetworkId: o.externalNetworkId,
        hasFixedNetwork: true,
        dnsNameservers: o.dnsNameservers,
        keypair: o.keypair,
      });
      const opt = { parent: this, provider: osProvider };
      const template = new openstack.containerinfra.ClusterTemplate(
        `${name}-template`,
        {
          name: `${name}-template`,
          ...plan,
          fixedNetwork: net.networkId,
          fixedSubnet: net.subnetId,
          ...(o.keypair ? { keypairId: o.keypair } : {}),
        },
        opt,
      );
      const cluster = new openstack.containerinfra.Cluster(
        `${name}-magnum`,
        {
          name: `${name}-magnum`,
          clusterTemplateId: template.id,
          nodeCount: o.nodeCount,
          masterCount: 1,
          fixedNetwork: net.networkId,
          fixedSubnet: net.subnetId,
          ...(o.keypair ? { keypair: o.keypair } : {}),
        },
        opt,
      );
      this.kubeconfig = pulumi.secret(cluster.kubeconfig.apply((k) => k.rawConfig ?? ""));
    }
    this.provider = kubeconfigProvider(`${name}-provider`, this.kubeconfig, args.kubeconfigContext, this);
    this.registerOutputs({ kubeconfig: this.kubeconfig, networkId: net.networkId });
  }
}
