import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "./kubectl";

/**
 * A data service's own client, run as an app would run it: in a pod on an app cluster's node,
 * configured from the binding's Secret alone. The Secret is copied from the control plane's
 * binding namespace to the app cluster first, which is what the konnector does for a bound
 * Secret; examples/data-service/connect-from-app-cluster.sh does the same for psql.
 */
export interface AppClient {
  /** The control plane's and the app cluster's kubeconfigs. */
  controlPlane: string;
  app: string;
  /** Where the binding's Secret is on the control plane. */
  namespace: string;
  secret: string;
  /** Pod name, and the node's locally built image holding the client (nothing can be pulled). */
  name: string;
  image: string;
  /** A POSIX shell script; the Secret's keys are in `env` and as files under /creds. */
  script: string;
  /** Environment variable → the Secret key it is read from (keys may be dotted, as a9s's are). */
  env: Record<string, string>;
  /** Keys the Secret may lack. */
  optional?: string[];
}

const CONSUMER_NS = "data-consumer";

/** Runs the client to completion; whether it succeeded, and its log. */
export async function runAppClient(c: AppClient, timeoutMs = 120_000): Promise<{ ok: boolean; out: string }> {
  const source = kubectlJson<{ type: string; data: Record<string, string> }>(c.controlPlane, [
    "-n",
    c.namespace,
    "get",
    "secret",
    c.secret,
  ]);
  const apply = (doc: object) => {
    const r = kubectlApply(c.app, JSON.stringify(doc));
    if (r.status !== 0) throw new Error(r.stderr);
  };
  apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: CONSUMER_NS } });
  apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: c.secret, namespace: CONSUMER_NS },
    type: source.type,
    data: source.data,
  });
  kubectlTry(c.app, ["-n", CONSUMER_NS, "delete", "pod", c.name, "--ignore-not-found", "--wait=true"]);
  apply({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: c.name, namespace: CONSUMER_NS },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534 },
      containers: [
        {
          name: "client",
          image: c.image,
          imagePullPolicy: "Never",
          command: ["sh", "-c", c.script],
          env: Object.entries(c.env).map(([name, key]) => ({
            name,
            valueFrom: {
              secretKeyRef: { name: c.secret, key, optional: c.optional?.includes(key) ?? false },
            },
          })),
          volumeMounts: [{ name: "creds", mountPath: "/creds", readOnly: true }],
        },
      ],
      volumes: [{ name: "creds", secret: { secretName: c.secret } }],
    },
  });
  // Until it has ended either way: a wait for Succeeded alone sits out its timeout on a failure.
  const phase = () =>
    kubectl(c.app, ["-n", CONSUMER_NS, "get", "pod", c.name, "-o", "jsonpath={.status.phase}"]);
  await eventually(`${c.name} to end`, () => ["Succeeded", "Failed"].includes(phase()), timeoutMs);
  const out = kubectlTry(c.app, ["-n", CONSUMER_NS, "logs", c.name]).stdout;
  return { ok: phase() === "Succeeded", out };
}
