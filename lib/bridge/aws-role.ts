/**
 * `bridge.awsRoleArn`: the deployed bridge's S3 state through an IAM role rather than keys. On
 * EKS a ServiceAccount annotated `eks.amazonaws.com/role-arn` makes the pod identity webhook give
 * every new pod of that account `AWS_ROLE_ARN` and `AWS_WEB_IDENTITY_TOKEN_FILE` (a projected
 * token), from which the AWS SDK's default chain assumes the role (EKS user guide, "IAM roles for
 * service accounts"; eksctl's "iamserviceaccounts"). The engine the bridge runs reads its S3
 * backend with that chain (test/e2e/s3-state-credentials.test.ts replays it on moto's STS).
 * Pure.
 */
import type { BridgeState } from "./deployment";

/** The ServiceAccount annotation EKS's pod identity webhook reads. */
export const EKS_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn";
/**
 * On the pod template: the webhook changes only pods made after the annotation, so a new role
 * must roll the pods, which a changed template does.
 */
export const POD_ROLE_ANNOTATION = "klutch.anynines.com/aws-role-arn";

/** An IAM role's ARN: partition, 12-digit account, `role/` with an optional path. */
const ROLE_ARN = /^arn:aws(-cn|-us-gov)?:iam::\d{12}:role\/([\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;

/** Why the role cannot serve this bridge, or undefined. */
export function awsRoleProblem(
  arn: string,
  o: { deployed: boolean; local: boolean; state?: BridgeState },
): string | undefined {
  if (!ROLE_ARN.test(arn))
    return `is "${arn}", which is no IAM role's ARN: give it as arn:aws:iam::<account>:role/<name>`;
  if (o.local)
    return `is ${arn}, but a local cluster runs no EKS pod identity webhook to hand the pods the role: remove bridge.awsRoleArn`;
  if (!o.deployed)
    return `is ${arn}, but this environment deploys no bridge (bridge.deploy): remove bridge.awsRoleArn, or deploy the bridge`;
  if (o.state?.kind !== "backend" || !o.state.url.startsWith("s3://"))
    return `is ${arn}, but the bridge's state is not in S3 (bridge.state ${o.state?.kind === "backend" ? o.state.url.split("?")[0] : "unset"}), the one thing the role is for: remove bridge.awsRoleArn, or keep the state in s3://`;
  return undefined;
}
