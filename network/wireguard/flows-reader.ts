import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { clusterEndpoint } from "../../lib/bind/cluster-endpoint";
import { flowsReaderRules, type FlowsReaderAccess } from "./flows-sync";

export interface WireguardFlowsReaderArgs {
  /** The control plane's provider: where the bridge publishes the flows. */
  provider: k8s.Provider;
  /** The control plane's kubeconfig (secret): only its API server address is used. */
  kubeconfig: pulumi.Input<string>;
  context?: string;
  namespace: string;
  /** The flows ConfigMap, made here empty (the bridge's groups own its keys). */
  configMap: string;
  labels?: Record<string, string>;
}

/**
 * The flows ConfigMap of a gateway VM and the VM's identity to read it: a ServiceAccount whose
 * Role may `get` that one ConfigMap (flowsReaderRules) and a long-lived token Secret the token
 * controller fills. `access` (a secret: it holds the token) goes into the VM's cloud-init.
 */
export class WireguardFlowsReader extends pulumi.ComponentResource {
  public readonly access: pulumi.Output<FlowsReaderAccess>;

  constructor(name: string, args: WireguardFlowsReaderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:network:WireguardFlowsReader", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/name": "klutch-wireguard" };
    const meta = (n: string) => ({ name: n, namespace: args.namespace, labels });
    // Created empty and never changed here (a changed ConfigMap would be replaced, dropping the
    // bridge's keys).
    const flows = new k8s.core.v1.ConfigMap(`${name}-flows`, { metadata: meta(args.configMap) }, child);
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-account`,
      { metadata: meta("klutch-wireguard-gateway") },
      child,
    );
    const role = new k8s.rbac.v1.Role(
      `${name}-role`,
      { metadata: meta("klutch-wireguard-gateway"), rules: flowsReaderRules(args.configMap) },
      child,
    );
    new k8s.rbac.v1.RoleBinding(
      `${name}-role-binding`,
      {
        metadata: meta("klutch-wireguard-gateway"),
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: args.namespace }],
      },
      child,
    );
    // The provider waits until the token controller has filled it (as for BridgeDataPlane).
    const token = new k8s.core.v1.Secret(
      `${name}-token`,
      {
        metadata: {
          ...meta("klutch-wireguard-gateway-token"),
          annotations: { "kubernetes.io/service-account.name": account.metadata.name },
        },
        type: "kubernetes.io/service-account-token",
      },
      { ...child, dependsOn: [flows] },
    );
    const server = pulumi
      .output(args.kubeconfig)
      .apply((k) => pulumi.unsecret(pulumi.output(clusterEndpoint(k, args.context).server)));
    this.access = pulumi.secret(
      pulumi.all([server, token.data]).apply(([s, data]) => ({
        server: s,
        caPem: Buffer.from(data?.["ca.crt"] ?? "", "base64").toString("utf8"),
        token: Buffer.from(data?.token ?? "", "base64").toString("utf8"),
        namespace: args.namespace,
        name: args.configMap,
      })),
    );
    this.registerOutputs({ access: this.access });
  }
}
