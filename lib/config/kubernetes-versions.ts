import { z } from "zod";

/**
 * The Kubernetes minors upstream supports, with the end of life kubernetes.io/releases/<minor>/
 * gives each (read 2026-12-02). A cluster this project creates (EKS, Magnum) is refused below the
 * oldest: nothing patches it. Move OLDEST_SUPPORTED when its date passes (docs/versions.md).
 */
export const KUBERNETES_END_OF_LIFE: Readonly<Record<string, string>> = {
  "1.35": "2027-02-28",
  "1.36": "2027-06-28",
  "1.37": "2027-10-28",
};
const OLDEST_SUPPORTED = 35;
const NEWEST_RELEASED = 37;

/**
 * EKS's default: the newest minor known to be in EKS standard support, which is 14 months from
 * EKS's own release of it (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html);
 * 1.35's ends on 2027-03-27. An older minor costs extended-support fees per cluster hour.
 */
export const EKS_DEFAULT_KUBERNETES_VERSION = "1.35";

/** The minor of "1.35", "v1.35.2" or "v1.35.2-rancher1" (Magnum's kube_tag), if it has one. */
export function kubernetesMinor(version: string): number | undefined {
  const m = /^v?1\.(\d+)(?:\.|-|$)/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

/** Why `version` is refused, or undefined when it is a supported minor (or a newer one). */
export function unsupportedKubernetesProblem(version: string): string | undefined {
  const minor = kubernetesMinor(version);
  if (minor === undefined || minor >= OLDEST_SUPPORTED) return undefined;
  return (
    `Kubernetes 1.${minor} is past its upstream end of life: use a supported minor, ` +
    `1.${OLDEST_SUPPORTED} to 1.${NEWEST_RELEASED} (kubernetes.io/releases)`
  );
}

/** A zod refinement for the version fields of the cluster kinds. */
export function supportedKubernetes<T extends z.ZodString>(field: T) {
  return field.superRefine((value, ctx) => {
    const problem = unsupportedKubernetesProblem(value);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
  });
}
