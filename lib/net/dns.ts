/**
 * The DNS-1123 label rule, once: Kubernetes object names (namespaces, Services), cluster
 * names that become directories and certificate subjects, WireGuard peer names. Kubernetes'
 * own definition: k8s.io/apimachinery/pkg/util/validation (IsDNS1123Label, at most 63
 * characters, lowercase alphanumerics and '-', starting and ending alphanumeric).
 */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const DNS_LABEL_RULE =
  "must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters";

export function isDnsLabel(value: unknown): value is string {
  return typeof value === "string" && DNS_LABEL.test(value);
}
