/**
 * A PostgreSQL Deployment from the node's locally built image (klutch.local/postgres): the
 * official image's uid, an exec readiness probe (pg_isready), its data in an emptyDir. For
 * the e2e files that run workloads on a local cluster's node.
 */
export function postgresDeployment(opts: {
  name: string;
  namespace: string;
  image: string | undefined;
  password: string;
  /** Requests of the container (Burstable instead of BestEffort), as a real data service has. */
  resources?: { requests: Record<string, string> };
  /** Also PGPASSWORD, so psql run in the pod (kubectl exec) can log in over TCP. */
  clientPassword?: boolean;
}): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: opts.name, namespace: opts.namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: opts.name } },
      template: {
        metadata: { labels: { app: opts.name } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 999, runAsGroup: 999, fsGroup: 999 },
          containers: [
            {
              name: "postgres",
              image: opts.image,
              imagePullPolicy: "Never",
              env: [
                { name: "POSTGRES_PASSWORD", value: opts.password },
                ...(opts.clientPassword ? [{ name: "PGPASSWORD", value: opts.password }] : []),
              ],
              ports: [{ containerPort: 5432 }],
              ...(opts.resources ? { resources: opts.resources } : {}),
              readinessProbe: {
                exec: { command: ["pg_isready", "-h", "127.0.0.1", "-U", "postgres"] },
                periodSeconds: 2,
              },
              volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
            },
          ],
          volumes: [{ name: "data", emptyDir: {} }],
        },
      },
    },
  };
}
