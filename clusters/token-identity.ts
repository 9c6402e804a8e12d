import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";

export interface TokenIdentityArgs {
  namespace: pulumi.Input<string>;
  /** The ServiceAccount's, Role's and RoleBinding's name; the token Secret is `<name>-token`. */
  objectName: string;
  rules: k8s.types.input.rbac.v1.PolicyRule[];
  labels: Record<string, string>;
}

/**
 * A namespaced identity for a program outside the cluster's pods (the bridge's data plane, a
 * gateway VM): a ServiceAccount, a Role with exactly `rules`, its RoleBinding, and a long-lived
 * token Secret. Long-lived because the kubelet's projected tokens belong to a pod of the
 * account; the provider waits until the token controller has filled it (pulumi-kubernetes
 * v4.25.0 pkg/await/awaiters.go, service-account-token Secrets). Children are named
 * `<name>-account`, `-role`, `-role-binding`, `-token`.
 */
export function tokenIdentity(
  name: string,
  args: TokenIdentityArgs,
  opts: pulumi.CustomResourceOptions,
): { account: k8s.core.v1.ServiceAccount; token: k8s.core.v1.Secret } {
  const metadata = { name: args.objectName, namespace: args.namespace, labels: args.labels };
  const account = new k8s.core.v1.ServiceAccount(`${name}-account`, { metadata }, opts);
  const role = new k8s.rbac.v1.Role(`${name}-role`, { metadata, rules: args.rules }, opts);
  new k8s.rbac.v1.RoleBinding(
    `${name}-role-binding`,
    {
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: args.namespace }],
    },
    opts,
  );
  const token = new k8s.core.v1.Secret(
    `${name}-token`,
    {
      metadata: {
        ...metadata,
        name: `${args.objectName}-token`,
        annotations: { "kubernetes.io/service-account.name": account.metadata.name },
      },
      type: "kubernetes.io/service-account-token",
    },
    opts,
  );
  return { account, token };
}
