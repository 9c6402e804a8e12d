import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { clusterEndpoint } from "../../lib/bind/cluster-endpoint";
import { flowsReaderRules, type FlowsReaderAccess } from "./model/flows-sync";
import { tokenIdentity } from "../../clusters/token-identity";

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
    const { token } = tokenIdentity(
      name,
      {
        namespace: args.namespace,
        objectName: "klutch-wireguard-gateway",
        rules: flowsReaderRules(args.configMap),
        labels,
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
