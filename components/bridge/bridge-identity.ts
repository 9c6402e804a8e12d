import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { bridgeRules } from "../../lib/bridge/model";

export interface BridgeIdentityArgs {
  /** The control plane's Kubernetes provider. */
  provider: k8s.Provider;
  namespace: pulumi.Input<string>;
  /** The settings ConfigMap the environment writes for the bridge; the identity may read that one object. */
  settings?: { namespace: pulumi.Input<string>; name: string };
  labels?: Record<string, string>;
}

/**
 * The identity the Crossplane bridge runs as on the control plane: a ServiceAccount bound
 * to a ClusterRole limited to NetworkPaths, their status and events, and (with `settings`)
 * a Role that may get exactly the settings ConfigMap.
 */
export class BridgeIdentity extends pulumi.ComponentResource {
  public readonly serviceAccountName: pulumi.Output<string>;

  constructor(name: string, args: BridgeIdentityArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bridge:BridgeIdentity", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/name": "klutch-bridge" };
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-account`,
      { metadata: { name: "klutch-bridge", namespace: args.namespace, labels } },
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
    if (args.settings) {
      const reader = new k8s.rbac.v1.Role(
        `${name}-settings-role`,
        {
          metadata: { name: "klutch-bridge-settings", namespace: args.settings.namespace, labels },
          rules: [
            {
              apiGroups: [""],
              resources: ["configmaps"],
              resourceNames: [args.settings.name],
              verbs: ["get"],
            },
          ],
        },
        child,
      );
      new k8s.rbac.v1.RoleBinding(
        `${name}-settings-role-binding`,
        {
          metadata: { name: "klutch-bridge-settings", namespace: args.settings.namespace, labels },
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
