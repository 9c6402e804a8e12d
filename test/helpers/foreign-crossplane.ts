/**
 * Crossplane core's Deployment as its chart (2.4.0) labels it, installed by someone else: what
 * an operator's control plane already runs. The checks only read it (lib/crossplane/
 * foreign-crossplane.ts, installed-crossplane.ts), so an API-only local cluster serves.
 */
export const crossplaneDeployment = (
  namespace: string,
  tag: string,
  labels: Record<string, string> = {},
  args: string[] = [],
): string =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "crossplane",
      namespace,
      labels: { app: "crossplane", release: "crossplane", "app.kubernetes.io/name": "crossplane", ...labels },
    },
    spec: {
      selector: { matchLabels: { app: "crossplane", release: "crossplane" } },
      template: {
        metadata: { labels: { app: "crossplane", release: "crossplane" } },
        spec: {
          containers: [
            { name: "crossplane", image: `xpkg.crossplane.io/crossplane/crossplane:${tag}`, args },
          ],
        },
      },
    },
  });
