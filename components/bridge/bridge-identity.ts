import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { bridgeNamespaceRules, bridgeRules } from "../../lib/bridge/model";
import { EKS_ROLE_ANNOTATION } from "../../lib/bridge/aws-role";

export interface BridgeIdentityArgs {
  /** The control plane's Kubernetes provider. */
  provider: k8s.Provider;
  namespace: pulumi.Input<string>;
  /**
   * The namespace of the settings ConfigMap and the leader Lease: the identity may read
   * that one ConfigMap and hold that one Lease there.
   */
  coordination?: { namespace: pulumi.Input<string>; settings: string; lease: string };
  labels?: Record<string, string>;
  /** The IAM role EKS hands its pods (bridge.awsRoleArn): the ServiceAccount's annotation. */
  awsRoleArn?: string;
}

/**
 * The identity the Crossplane bridge runs as on the control plane: a ServiceAccount bound
 * to a ClusterRole limited to NetworkPaths, their status and events, and (with
 * `coordination`) a Role that may get exactly the settings ConfigMap and hold exactly the
 * leader Lease.
 */
export class BridgeIdentity extends pulumi.ComponentResource {
  public readonly serviceAccountName: pulumi.Output<string>;

  constructor(name: string, args: BridgeIdentityArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bridge:BridgeIdentity", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/name": "klutch-bridge" };
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-account`,
      {
        metadata: {
          name: "klutch-bridge",
          namespace: args.namespace,
          labels,
          ...(args.awsRoleArn ? { annotations: { [EKS_ROLE_ANNOTATION]: args.awsRoleArn } } : {}),
        },
      },
      child,
    );
    const role = new k8s.rbac.v1.ClusterRole(
      `${name}-role`,
      { metadata: { name: "klutch-bridge", labels }, rules: bridgeRules() },
      child,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-role-binding`,
      {
        metadata: { name: "klutch-bridge", labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: args.namespace }],
      },
      child,
    );
    if (args.coordination) {
      const { namespace, settings, lease } = args.coordination;
      const reader = new k8s.rbac.v1.Role(
        `${name}-coordination-role`,
        {
          metadata: { name: "klutch-bridge", namespace, labels },
          rules: bridgeNamespaceRules(settings, lease),
        },
        child,
      );
      new k8s.rbac.v1.RoleBinding(
        `${name}-coordination-role-binding`,
        {
          metadata: { name: "klutch-bridge", namespace, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: reader.metadata.name },
          subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: args.namespace }],
        },
        child,
      );
    }
    this.serviceAccountName = account.metadata.name;
    this.registerOutputs({ serviceAccountName: this.serviceAccountName });
  }
}
