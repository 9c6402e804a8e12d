import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { renderConsumerKubeconfig } from "../../lib/bind/app-cluster-plan";
import { dataPlaneInstanceRules, dataPlaneNodeRules, dataPlaneRules } from "../../lib/bridge/rbac";
import { tokenIdentity } from "../../clusters/token-identity";

export interface BridgeDataPlaneArgs {
  /** The data-service cluster's Kubernetes provider (where the proxies run). */
  provider: k8s.Provider;
  /** The proxies' namespace (the bridge's `--data-plane-namespace`). */
  namespace: pulumi.Input<string>;
  /**
   * The API server address as the bridge's pods reach it. Default: the `default/kubernetes`
   * Service's ClusterIP, for a bridge running in the data-service cluster itself; an address,
   * not the Service's DNS name, so it works on clusters without cluster DNS (the local ones).
   */
  server?: pulumi.Input<string>;
  labels?: Record<string, string>;
  /**
   * Some app cluster's proxy is a NodePort Service: the identity may list nodes, for the node
   * address the bridge reports to its consumers (lib/bridge/rbac.ts dataPlaneNodeRules).
   */
  listNodes?: boolean;
  /**
   * Some app cluster uses the proxy: the identity may read instance Services and their
   * EndpointSlices in every namespace (lib/bridge/rbac.ts dataPlaneInstanceRules), which the
   * kernel hop follows and the haproxy hop's health reader judges.
   */
  readInstances?: boolean;
  /**
   * Some app cluster's proxy uses the kernel hop: the identity may also write EndpointSlices in
   * its namespace (the ones a KernelPath writes beside its Service; lib/bridge/rbac.ts dataPlaneRules).
   */
  writeSlices?: boolean;
}

/**
 * The identity the bridge builds proxies with (its `--data-plane-kubeconfig`): a ServiceAccount
 * in the proxies' namespace, a Role there with exactly what a TcpProxy is made of and what the
 * Kubernetes provider watches while it waits (lib/bridge/rbac.ts dataPlaneRules), and a
 * long-lived token Secret the token controller fills; `kubeconfig` holds that token (a secret).
 * Apart from the bridge's own identity (BridgeIdentity), which may not create workloads.
 */
export class BridgeDataPlane extends pulumi.ComponentResource {
  public readonly serviceAccountName: pulumi.Output<string>;
  /** A kubeconfig for the data plane as this identity, namespace set (a Pulumi secret). */
  public readonly kubeconfig: pulumi.Output<string>;

  constructor(name: string, args: BridgeDataPlaneArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bridge:BridgeDataPlane", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/name": "klutch-bridge" };
    const { account, token } = tokenIdentity(
      name,
      {
        namespace: args.namespace,
        objectName: "klutch-bridge-proxies",
        rules: dataPlaneRules(args.writeSlices),
        labels,
      },
      child,
    );
    // Cluster-scoped, so named after the proxies' namespace: one per environment's data plane.
    // `resource` names the Pulumi resources (their URNs stay as released), `reads` the objects.
    const clusterReader = (resource: string, reads: string, rules: ReturnType<typeof dataPlaneNodeRules>) => {
      const readerName = pulumi.interpolate`klutch-bridge-proxies:${args.namespace}:${reads}`;
      const role = new k8s.rbac.v1.ClusterRole(
        `${name}-${resource}`,
        { metadata: { name: readerName, labels }, rules },
        child,
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        `${name}-${resource}`,
        {
          metadata: { name: readerName, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
          subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: args.namespace }],
        },
        child,
      );
    };
    if (args.listNodes) clusterReader("node-reader", "nodes", dataPlaneNodeRules());
    if (args.readInstances) clusterReader("instance-reader", "instances", dataPlaneInstanceRules());
    const server =
      args.server ??
      k8s.core.v1.Service.get(`${name}-api-service`, "default/kubernetes", child).spec.apply(
        (spec) => `https://${spec.clusterIP}:443`,
      );
    this.serviceAccountName = account.metadata.name;
    this.kubeconfig = pulumi.secret(
      pulumi.all([server, token.data, args.namespace]).apply(([s, data, namespace]) =>
        renderConsumerKubeconfig({
          server: s,
          // The cluster's CA as the token controller hands it to every token (its --root-ca-file).
          caPem: Buffer.from(data?.["ca.crt"] ?? "", "base64").toString("utf8"),
          token: Buffer.from(data?.token ?? "", "base64").toString("utf8"),
          namespace,
        }),
      ),
    );
    this.registerOutputs({ serviceAccountName: this.serviceAccountName, kubeconfig: this.kubeconfig });
  }
}
