import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

export interface BridgeSettingsArgs {
  /** The control plane's kubeconfig (kept secret). */
  kubeconfig: pulumi.Input<string>;
  /** The kubeconfig context of the control plane, when it has several. */
  context?: pulumi.Input<string>;
  namespace: pulumi.Input<string>;
  /** The ConfigMap's name: the one the bridge's `--settings` and its Role name. */
  configMapName: pulumi.Input<string>;
  /** The key the rendered settings live under, and the rendered settings. */
  key: string;
  settings: pulumi.Input<string>;
  labels?: Record<string, string>;
}

/**
 * The environment's per-consumer settings for the Crossplane bridge, as one ConfigMap on
 * the control plane.
 *
 * The Kubernetes provider replaces a ConfigMap whose data changes, and with a fixed name
 * that means delete-then-create: a bridge reconciling in between would fall back to its
 * command-line defaults and briefly re-shape a consumer's proxy. This ConfigMap goes
 * through its own provider with mutable ConfigMaps, so adding or removing an app cluster
 * updates it in place. Other ConfigMaps (the proxy's) keep the replace-to-roll behaviour.
 */
export class BridgeSettings extends pulumi.ComponentResource {
  public readonly configMapName: pulumi.Output<string>;

  constructor(name: string, args: BridgeSettingsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bridge:BridgeSettings", name, {}, opts);
    const provider = new k8s.Provider(
      `${name}-provider`,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        context: args.context,
        enableServerSideApply: true,
        enableConfigMapMutable: true,
      },
      { parent: this },
    );
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-configmap`,
      {
        metadata: { name: args.configMapName, namespace: args.namespace, labels: args.labels },
        data: { [args.key]: args.settings },
      },
      { parent: this, provider },
    );
    this.configMapName = configMap.metadata.name;
    this.registerOutputs({ configMapName: this.configMapName });
  }
}
