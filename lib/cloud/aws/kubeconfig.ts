import { stringify } from "yaml";

/**
 * A kubeconfig for an EKS cluster that authenticates with `aws eks get-token` (an exec
 * credential plugin), so no long-lived token is ever written. It still names the endpoint
 * and CA of a private cluster, so callers keep it a Pulumi secret.
 */
export interface EksKubeconfigInput {
  clusterName: string;
  endpoint: string;
  /** Base64 PEM, as EKS reports certificateAuthority.data. */
  certificateAuthorityData: string;
  region: string;
  /** Role to assume for the token (the cluster's account role in cross-account setups). */
  roleArn?: string;
}

export function renderEksKubeconfig(input: EksKubeconfigInput): string {
  const name = input.clusterName;
  const args = ["eks", "get-token", "--cluster-name", name, "--region", input.region];
  if (input.roleArn) args.push("--role-arn", input.roleArn);
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: { server: input.endpoint, "certificate-authority-data": input.certificateAuthorityData },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
    users: [
      {
        name,
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1beta1",
            command: "aws",
            args,
            interactiveMode: "Never",
          },
        },
      },
    ],
  });
}
