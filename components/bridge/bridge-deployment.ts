import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { POD_ROLE_ANNOTATION } from "../../lib/bridge/aws-role";
import {
  BRIDGE_PATHS,
  BRIDGE_POD_LABELS,
  BRIDGE_UID,
  bridgeArgs,
  bridgeDeploymentProblem,
  describeProblem,
  type BridgeState,
} from "../../lib/bridge/deployment";

export type { BridgeState } from "../../lib/bridge/deployment";

export interface BridgeDeploymentArgs {
  /** The control plane's Kubernetes provider (the bridge runs there, next to the NetworkPaths). */
  provider: k8s.Provider;
  namespace: pulumi.Input<string>;
  /** BridgeIdentity's ServiceAccount: the pods talk to the control plane as it (in-cluster config). */
  serviceAccountName: pulumi.Input<string>;
  /** The bridge image: a local node's `klutch.local/bridge:…` by name and digest, or the published one. */
  image: pulumi.Input<string>;
  /** `Never` for a local node's imported image (nothing can be pulled there). Default IfNotPresent. */
  imagePullPolicy?: "Never" | "IfNotPresent" | "Always";
  /** Default 2: one leads (the Lease), the other stands by and takes over within the lease duration. */
  replicas?: number;
  /** Where the groups' Pulumi state lives, seen alike by every replica (lib/bridge/deployment.ts). */
  state: BridgeState;
  /** Encrypts the secrets in the groups' stacks; kept in a Secret mounted as a file, never in env. */
  passphrase: pulumi.Input<string>;
  /**
   * The text of an AWS shared credentials file for state in S3, mounted from the same Secret;
   * the engine finds it by AWS_SHARED_CREDENTIALS_FILE (a path in the environment, not a key).
   * Without it, the AWS SDK's default chain in the pod (a node or workload role).
   */
  stateCredentials?: pulumi.Input<string>;
  /** The IAM role its ServiceAccount names for EKS (bridge.awsRoleArn), marked on the pods. */
  awsRoleArn?: string;
  /** The data-service cluster the proxies run in (target kubernetes), mounted from the same Secret. */
  dataPlaneKubeconfig: pulumi.Input<string>;
  /** Further bridge flags: --service-type, --allowed-sources, --proxy-image, --data-plane-namespace… */
  bridgeFlags?: string[];
  /** Port of /healthz, /readyz and /metrics in the pod. Default 9464. */
  opsPort?: number;
  labels?: Record<string, string>;
  /** Resource requests and limits of the bridge container. */
  resources?: k8s.types.input.core.v1.ResourceRequirements;
}

/**
 * The Crossplane bridge as a Deployment on the control plane: `replicas` pods of the bridge
 * image with `--leader-elect` (only the holder of the Lease reconciles), running as
 * BridgeIdentity's ServiceAccount with in-cluster config, probed on the ops server's /readyz
 * and /healthz, with the Pulumi passphrase and the data plane's kubeconfig as files from one
 * Secret and the groups' state where every replica sees it (`state`).
 */
export class BridgeDeployment extends pulumi.ComponentResource {
  public readonly deploymentName: pulumi.Output<string>;

  constructor(name: string, args: BridgeDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before super(): a bad argument registers nothing, not even this component.
    const replicas = args.replicas ?? 2;
    const opsPort = args.opsPort ?? 9464;
    const problem = bridgeDeploymentProblem({
      replicas,
      opsPort,
      state: args.state,
      flags: args.bridgeFlags ?? [],
    });
    if (problem) throw new Error(`BridgeDeployment ${name}: ${describeProblem(problem)}`);
    if (typeof args.image === "string" && args.image.trim() === "")
      throw new Error(
        `BridgeDeployment ${name}: image "${args.image}" must name the bridge image (a local node's klutch.local/bridge:…, or the published one)`,
      );
    super("klutch:bridge:BridgeDeployment", name, {}, opts);

    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, ...BRIDGE_POD_LABELS };
    const selector = { ...BRIDGE_POD_LABELS, "app.kubernetes.io/instance": name };
    const secret = new k8s.core.v1.Secret(
      `${name}-secret`,
      {
        metadata: { name: `${name}-secret`, namespace: args.namespace, labels },
        stringData: {
          passphrase: pulumi.secret(args.passphrase),
          "data-plane-kubeconfig": pulumi.secret(args.dataPlaneKubeconfig),
          ...(args.stateCredentials ? { "aws-credentials": pulumi.secret(args.stateCredentials) } : {}),
        },
      },
      child,
    );
    const state = args.state;
    const probe = (p: string) => ({ httpGet: { path: p, port: "ops" } });
    const deployment = new k8s.apps.v1.Deployment(
      `${name}`,
      {
        metadata: { name, namespace: args.namespace, labels },
        spec: {
          replicas,
          selector: { matchLabels: selector },
          template: {
            metadata: {
              labels: { ...labels, ...selector },
              // A new role reaches only new pods (EKS's webhook acts on pod creation): a change rolls them.
              ...(args.awsRoleArn ? { annotations: { [POD_ROLE_ANNOTATION]: args.awsRoleArn } } : {}),
            },
            spec: {
              serviceAccountName: args.serviceAccountName,
              // main.ts: 20 s for the engine runs in flight, 1 s to release the Lease.
              terminationGracePeriodSeconds: 30,
              // The Secret's files are root's; fsGroup makes them the bridge's group (mode 0440).
              securityContext: {
                runAsNonRoot: true,
                runAsUser: BRIDGE_UID,
                runAsGroup: BRIDGE_UID,
                fsGroup: BRIDGE_UID,
                seccompProfile: { type: "RuntimeDefault" },
              },
              initContainers:
                state.kind === "hostPath"
                  ? [
                      {
                        // A hostPath the kubelet creates is root's 0755: hand it to the bridge's
                        // user, with CHOWN as the one capability, before the bridge starts.
                        name: "state-owner",
                        image: args.image,
                        imagePullPolicy: args.imagePullPolicy ?? "IfNotPresent",
                        command: ["/usr/local/bin/node", "-e", stateOwnerScript(BRIDGE_PATHS.state)],
                        securityContext: {
                          runAsUser: 0,
                          runAsNonRoot: false,
                          allowPrivilegeEscalation: false,
                          capabilities: { drop: ["ALL"], add: ["CHOWN"] },
                        },
                        volumeMounts: [{ name: "state", mountPath: BRIDGE_PATHS.state }],
                      },
                    ]
                  : [],
              containers: [
                {
                  name: "bridge",
                  image: args.image,
                  imagePullPolicy: args.imagePullPolicy ?? "IfNotPresent",
                  args: bridgeArgs({ opsPort, state, flags: args.bridgeFlags ?? [] }),
                  // Paths of the secrets, not the secrets (main.ts and the AWS SDK read the files).
                  env: [
                    { name: "PULUMI_CONFIG_PASSPHRASE_FILE", value: BRIDGE_PATHS.passphrase },
                    ...(args.stateCredentials
                      ? [{ name: "AWS_SHARED_CREDENTIALS_FILE", value: BRIDGE_PATHS.awsCredentials }]
                      : []),
                  ],
                  ports: [{ name: "ops", containerPort: opsPort, protocol: "TCP" }],
                  readinessProbe: { ...probe("/readyz"), periodSeconds: 5, failureThreshold: 3 },
                  livenessProbe: {
                    ...probe("/healthz"),
                    initialDelaySeconds: 20,
                    periodSeconds: 10,
                    failureThreshold: 6,
                  },
                  resources: args.resources ?? {
                    requests: { cpu: "100m", memory: "256Mi" },
                    limits: { memory: "1536Mi" },
                  },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    capabilities: { drop: ["ALL"] },
                  },
                  volumeMounts: [
                    { name: "secret", mountPath: BRIDGE_PATHS.secretDir, readOnly: true },
                    { name: "state", mountPath: BRIDGE_PATHS.state },
                  ],
                },
              ],
              volumes: [
                { name: "secret", secret: { secretName: secret.metadata.name, defaultMode: 0o440 } },
                state.kind === "hostPath"
                  ? { name: "state", hostPath: { path: state.path, type: "DirectoryOrCreate" } }
                  : { name: "state", emptyDir: {} },
              ],
            },
          },
        },
      },
      child,
    );
    this.deploymentName = deployment.metadata.name;
    this.registerOutputs({ deploymentName: this.deploymentName });
  }
}

/**
 * Hands the state directory to the bridge's user once: chmod while root owns it, then chown.
 * Idempotent (the second replica, a restart) and safe when both replicas' init containers race.
 */
function stateOwnerScript(dir: string): string {
  const d = JSON.stringify(dir);
  return [
    `const fs = require("fs"), mine = () => fs.statSync(${d}).uid === ${BRIDGE_UID};`,
    `if (!mine()) try { fs.chmodSync(${d}, 0o700); fs.chownSync(${d}, ${BRIDGE_UID}, ${BRIDGE_UID}); }`,
    `catch (e) { if (!mine()) throw e; }`,
  ].join("\n");
}
