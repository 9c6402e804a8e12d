import { ENVIRONMENT_LABEL } from "../environment-plan";

/**
 * Why an object found on a cluster handed over by kubeconfig is not `environment`'s own, as the
 * refusals of foreign-namespaces.ts and foreign-apis.ts say it: another environment's label, or
 * none. Undefined for the environment's own object.
 */
export function notOwnedBy(
  labels: Record<string, string> | undefined,
  environment: string,
): string | undefined {
  const owner = labels?.[ENVIRONMENT_LABEL];
  if (owner === environment) return undefined;
  return owner ? `it belongs to environment ${owner}` : `it has no label ${ENVIRONMENT_LABEL}=${environment}`;
}
