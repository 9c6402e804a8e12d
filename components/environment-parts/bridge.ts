import type * as pulumi from "@pulumi/pulumi";
import type { EnvironmentConfig } from "../config/schema";
import {
  LEADER_LEASE,
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  SETTINGS_NAMESPACE,
  renderBridgeSettings,
} from "../../lib/bridge/settings";
import { bridgeSettings } from "../../network/plugins/bridge-settings";
import type { BuiltNetwork } from "../../network/plugins/environments";
import { BridgeDataPlane } from "../bridge/bridge-data-plane";
import { BridgeDeployment } from "../bridge/bridge-deployment";
import { BridgeIdentity } from "../bridge/bridge-identity";
import { BridgeSettings } from "../bridge/bridge-settings";
import type { ClusterAccess } from "../../clusters/types";
import type { EnvironmentPlan } from "../plan/environment-plan";

export interface BridgePartArgs {
  config: EnvironmentConfig;
  plan: EnvironmentPlan;
  controlPlane: ClusterAccess;
  network: BuiltNetwork;
  /** The settings namespace on the control plane, when the environment creates it. */
  networkNamespace?: pulumi.Resource;
  /** What the bridge's pods wait for: the connector API (its NetworkPath CRD). */
  connectorApi: pulumi.Resource;
  passphrase?: pulumi.Output<string>;
  /** The bridge's S3 state credentials (klutch:bridgeStateCredentials), when given. */
  stateCredentials?: pulumi.Output<string> | undefined;
}

/**
 * What the Crossplane bridge needs on the control plane, and the bridge itself when the plan
 * deploys it: each app cluster's network connector settings (keyed by the consumer namespace its
 * claims land in), the bridge's identity, the data plane's narrower identity, the Deployment.
 */
export function bridgePart(
  parent: pulumi.Resource,
  name: string,
  args: BridgePartArgs,
): BridgeDeployment | undefined {
  const { config, plan, controlPlane } = args;
  const labels = plan.labels;
  const inNamespace = { parent, dependsOn: args.networkNamespace ? [args.networkNamespace] : [] };
  const settingsMap = new BridgeSettings(
    `${name}-bridge-settings`,
    {
      kubeconfig: controlPlane.kubeconfig,
      context: config.controlPlane.kubeconfig?.context,
      namespace: SETTINGS_NAMESPACE,
      configMapName: SETTINGS_CONFIGMAP,
      key: SETTINGS_KEY,
      // With what the implementations' environment sides learnt once built (the WireGuard
      // tunnel's addresses).
      settings: args.network.plannedSettings.apply((planned) =>
        renderBridgeSettings(bridgeSettings(config, planned)),
      ),
      labels,
    },
    inNamespace,
  );
  const identity = new BridgeIdentity(
    `${name}-bridge-identity`,
    {
      provider: controlPlane.provider,
      namespace: SETTINGS_NAMESPACE,
      coordination: { namespace: SETTINGS_NAMESPACE, settings: SETTINGS_CONFIGMAP, lease: LEADER_LEASE },
      labels,
      ...(plan.bridge.deployment?.awsRoleArn ? { awsRoleArn: plan.bridge.deployment.awsRoleArn } : {}),
    },
    inNamespace,
  );
  const deployment = plan.bridge.deployment;
  if (!deployment) return undefined;
  if (!args.passphrase)
    throw new Error(
      "internal: the bridge is deployed without klutch:bridgePassphrase (validation checks it)",
    );
  // The data services, and so the proxies, live in the control plane's cluster: the bridge
  // builds them there as an identity of their namespace only.
  const dataPlane = new BridgeDataPlane(
    `${name}-bridge-data-plane`,
    {
      provider: controlPlane.provider,
      namespace: SETTINGS_NAMESPACE,
      labels,
      listNodes: plan.bridge.listNodes,
      readInstances: plan.bridge.readInstances,
      writeSlices: plan.bridge.writeSlices,
    },
    inNamespace,
  );
  return new BridgeDeployment(
    `${name}-bridge`,
    {
      provider: controlPlane.provider,
      namespace: SETTINGS_NAMESPACE,
      serviceAccountName: identity.serviceAccountName,
      image: deployment.image,
      imagePullPolicy: deployment.imagePullPolicy,
      replicas: deployment.replicas,
      state: deployment.state,
      passphrase: args.passphrase,
      ...(args.stateCredentials ? { stateCredentials: args.stateCredentials } : {}),
      ...(deployment.awsRoleArn ? { awsRoleArn: deployment.awsRoleArn } : {}),
      dataPlaneKubeconfig: dataPlane.kubeconfig,
      bridgeFlags: deployment.flags,
      labels,
    },
    {
      parent,
      // Its leader watches NetworkPaths (the connector API's CRD) and reads the settings;
      // its pods are Ready only once that watch runs, which Pulumi waits for.
      dependsOn: [
        identity,
        settingsMap,
        dataPlane,
        args.connectorApi,
        ...(args.networkNamespace ? [args.networkNamespace] : []),
      ],
    },
  );
}
