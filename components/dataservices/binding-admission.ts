import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { bindingAdmissionManifests } from "../../lib/dataservices/binding-admission";

export interface BindingAdmissionArgs {
  /** Provider of the cluster where ServiceBindings are written (an app cluster, or the control plane). */
  provider: k8s.Provider;
  /** The network-aware binding compositions the environment offers (none where it has no Klutch function). */
  offered: string[];
  labels: Record<string, string>;
}

/**
 * Refuses, when it is written, a ServiceBinding whose compositionRef names a network-aware
 * binding composition the environment does not offer, with the offered ones in the message
 * (lib/dataservices/binding-admission.ts). Type token `klutch:dataservices:BindingAdmission`.
 */
export class BindingAdmission extends pulumi.ComponentResource {
  constructor(name: string, args: BindingAdmissionArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:dataservices:BindingAdmission", name, {}, opts);
    const { policy, binding } = bindingAdmissionManifests(args.offered, args.labels);
    const k8sOpts = { parent: this, provider: args.provider };
    const created = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
      `${name}-policy`,
      policy,
      k8sOpts,
    );
    new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(`${name}-binding`, binding, {
      ...k8sOpts,
      dependsOn: [created],
    });
    this.registerOutputs({});
  }
}
