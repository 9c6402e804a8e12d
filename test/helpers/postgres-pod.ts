import { POSTGRES_UID } from "../../local-clusters/images/catalog";

/**
 * A PostgreSQL Deployment `name` of the local image (initdb on first start, data in an
 * emptyDir), Ready once `pg_isready` passes. `password` is the container's POSTGRES_PASSWORD
 * (a literal or a secretKeyRef).
 */
export function postgresDeployment(a: {
  name: string;
  namespace: string;
  image: string;
  password: { value: string } | { valueFrom: { secretKeyRef: { name: string; key: string } } };
  resources?: { requests: Record<string, string> };
  /** Also PGPASSWORD, so psql run in the pod (kubectl exec) can log in over TCP. */
  clientPassword?: boolean;
}): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: a.name, namespace: a.namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: a.name } },
      template: {
        metadata: { labels: { app: a.name } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: POSTGRES_UID,
            runAsGroup: POSTGRES_UID,
            fsGroup: POSTGRES_UID,
          },
          containers: [
            {
              name: "postgres",
              image: a.image,
              imagePullPolicy: "Never",
              env: [
                { name: "POSTGRES_PASSWORD", ...a.password },
                ...(a.clientPassword ? [{ name: "PGPASSWORD", ...a.password }] : []),
              ],
              ports: [{ containerPort: 5432 }],
              ...(a.resources ? { resources: a.resources } : {}),
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
