/** A Kubernetes RBAC PolicyRule (rbac.authorization.k8s.io/v1), as Roles and ClusterRoles hold them. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
