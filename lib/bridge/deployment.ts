import { parse as parseIni } from "ini";

/**
 * The bridge as a Deployment (components/bridge/bridge-deployment.ts): its command line,
 * mounts and the checks on its arguments. Pure, so the unit tests pin them.
 */

/** The uid the bridge image runs as (host/local-clusters/images/bridge-image.ts). */
export const BRIDGE_UID = 65532;

/**
 * The label every bridge pod carries (components/bridge/bridge-deployment.ts): the proxy pods'
 * NetworkPolicy admits pods with it to their health port (network/proxy/tcp-proxy.ts
 * healthReaders), where the bridge reads each path's health.
 */
export const BRIDGE_POD_LABELS: Readonly<Record<string, string>> = {
  "app.kubernetes.io/name": "klutch-bridge",
};

export const BRIDGE_PATHS = {
  secretDir: "/etc/klutch-bridge",
  passphrase: "/etc/klutch-bridge/passphrase",
  dataPlaneKubeconfig: "/etc/klutch-bridge/data-plane-kubeconfig",
  /** The S3 state's credentials (`klutch:bridgeStateCredentials`), when given. */
  awsCredentials: "/etc/klutch-bridge/aws-credentials",
  state: "/var/lib/klutch-bridge",
} as const;

/**
 * Where the groups' Pulumi state lives. Every replica must see the same state: the standby that
 * takes the Lease continues the stacks the old leader wrote (their resources, its ports, its
 * pending operations; programs/bridge/checkpoint.ts repairs what a killed engine left).
 * - `hostPath`: a directory on the node, the file backend in it. Right for a local cluster,
 *   whose one node runs both replicas; nothing here provisions volumes, so a PVC would stay
 *   Pending. On a multi-node cluster each node would have its own directory: use `backend`.
 * - `backend`: a Pulumi backend URL every pod reaches (s3://, gs://, azblob://, or the Pulumi
 *   Cloud https://…), the engine's own locking; the pods' state dir (workspaces) is scratch.
 *   Its credentials come the cloud's usual way (workload identity), or, for S3, from an AWS
 *   shared credentials file the Deployment mounts from its Secret (`stateCredentials`).
 */
export type BridgeState = { kind: "hostPath"; path: string } | { kind: "backend"; url: string };

const OWN_FLAGS = [
  "--kubeconfig",
  "--leader-elect",
  "--target",
  "--data-plane-kubeconfig",
  "--state-dir",
  "--backend",
  "--ops-address",
  "--ops-port",
];
const SHARED_BACKENDS = /^(s3|gs|azblob|https):\/\//;

/** A bad argument of the bridge Deployment: which one, and a message that starts with its value and says the fix. */
export interface BridgeDeploymentProblem {
  field: "replicas" | "opsPort" | "state.path" | "state.url" | "bridgeFlags";
  message: string;
}

export function bridgeDeploymentProblem(a: {
  replicas: number;
  opsPort: number;
  state: BridgeState;
  flags?: string[];
}): BridgeDeploymentProblem | undefined {
  if (!Number.isInteger(a.replicas) || a.replicas < 1)
    return { field: "replicas", message: `${a.replicas} must be a whole number >= 1 (2 for a standby)` };
  if (!Number.isInteger(a.opsPort) || a.opsPort < 1 || a.opsPort > 65535)
    return { field: "opsPort", message: `${a.opsPort} must be a TCP port (1-65535)` };
  if (a.state.kind === "hostPath" && !a.state.path.startsWith("/"))
    return { field: "state.path", message: `"${a.state.path}" must be an absolute directory on the node` };
  if (a.state.kind === "backend" && !SHARED_BACKENDS.test(a.state.url))
    return {
      field: "state.url",
      message: `"${a.state.url}" must be a backend every replica reaches (s3://, gs://, azblob:// or https://); a file:// backend in a pod is lost with it — use state.kind hostPath on a one-node cluster`,
    };
  const own = (a.flags ?? []).find((f) => OWN_FLAGS.includes(f.split("=")[0] as string));
  if (own)
    return {
      field: "bridgeFlags",
      message: `may not set ${own.split("=")[0]}: the component sets it; remove it from bridgeFlags`,
    };
  return undefined;
}

/** The problem as one line: `replicas 0 must be …`. */
export const describeProblem = (p: BridgeDeploymentProblem): string => `${p.field} ${p.message}`;

/** The bridge's command line in the pod (after the image's entry point, programs/bridge/main.js). */
export function bridgeArgs(a: { opsPort: number; state: BridgeState; flags: string[] }): string[] {
  return [
    "--leader-elect",
    "--target",
    "kubernetes",
    "--data-plane-kubeconfig",
    BRIDGE_PATHS.dataPlaneKubeconfig,
    "--state-dir",
    BRIDGE_PATHS.state,
    ...(a.state.kind === "backend" ? ["--backend", a.state.url] : []),
    // Every address: the kubelet probes the pod's IP.
    "--ops-address",
    "0.0.0.0",
    "--ops-port",
    String(a.opsPort),
    ...a.flags,
  ];
}

/**
 * What is wrong with the text given as the S3 state's credentials, without repeating any of it
 * (a message can end up in a CI log), or undefined. The bridge's engine reads it as an AWS shared
 * credentials file (AWS_SHARED_CREDENTIALS_FILE, the AWS SDK's default profile): the
 * `[default]` profile must name both keys.
 */
export function awsCredentialsProblem(text: string): string | undefined {
  let profiles: Record<string, unknown>;
  try {
    profiles = parseIni(text);
  } catch {
    return "is not the text of an AWS shared credentials file";
  }
  const profile = profiles.default as Record<string, unknown> | undefined;
  if (!profile || typeof profile !== "object") return "has no [default] profile";
  const missing = ["aws_access_key_id", "aws_secret_access_key"].filter(
    (k) => typeof profile[k] !== "string" || profile[k] === "",
  );
  return missing.length > 0 ? `has no ${missing.join(" and ")} in its [default] profile` : undefined;
}
