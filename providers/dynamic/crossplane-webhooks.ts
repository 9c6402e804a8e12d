import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import { statusCode } from "./kube-errors";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource, withSecretOutputs } from "./klutch-resource";

/**
 * Removes, after Crossplane is gone, the webhook configurations Crossplane wrote for itself.
 *
 * Crossplane's init container applies them at every start, with no owner
 * (crossplane v1.20.11 cmd/crossplane/core/init.go → internal/initializer/webhook_configurations.go,
 * from cluster/webhookconfigurations/: ValidatingWebhookConfiguration `crossplane`, renamed from
 * controller-tools' `validating-webhook-configuration`, and `crossplane-no-usages`; the same
 * code names a MutatingWebhookConfiguration `crossplane`, though 1.20 ships none). Neither the chart nor Pulumi
 * knows them, so they outlive a destroy. Their `failurePolicy: Fail` then points at a Service
 * that no longer exists: the next install's XRDs and Compositions are refused by the API server
 * (`failed calling webhook "compositeresourcedefinitions.apiextensions.crossplane.io"`) and
 * every DELETE of an object labelled `crossplane.io/in-use` fails.
 *
 * The chart depends on this resource, so this one is created first (a no-op) and deleted
 * after the chart's Deployment, when no Crossplane pod can write them again.
 */

export const CROSSPLANE_WEBHOOK_CONFIGURATIONS = {
  validating: ["crossplane", "crossplane-no-usages"],
  mutating: ["crossplane"],
} as const;

export interface CrossplaneWebhooksInputs {
  /** Admin kubeconfig of the cluster Crossplane runs on (a secret). */
  kubeconfig: string;
}

export const crossplaneWebhooksProvider: CompleteProvider<
  CrossplaneWebhooksInputs,
  CrossplaneWebhooksInputs,
  "create" | "diff" | "update" | "delete"
> = {
  create(inputs) {
    return Promise.resolve({ id: "crossplane-webhook-configurations", outs: inputs });
  },

  diff(_id, olds, news) {
    return Promise.resolve({ changes: olds.kubeconfig !== news.kubeconfig, replaces: [] });
  },

  update(_id, _olds, news) {
    return Promise.resolve({ outs: news });
  },

  async delete(_id, props) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- required at run time, as in export-request.ts
    const lib = require("@kubernetes/client-node") as typeof k8s;
    const kc = new lib.KubeConfig();
    kc.loadFromString(props.kubeconfig);
    const api = kc.makeApiClient(lib.AdmissionregistrationV1Api);
    const ignoreMissing = (err: unknown) => {
      if (statusCode(err) !== 404) throw err;
    };
    for (const name of CROSSPLANE_WEBHOOK_CONFIGURATIONS.validating)
      await api.deleteValidatingWebhookConfiguration({ name }).catch(ignoreMissing);
    for (const name of CROSSPLANE_WEBHOOK_CONFIGURATIONS.mutating)
      await api.deleteMutatingWebhookConfiguration({ name }).catch(ignoreMissing);
  },
};

/** See the file comment. Make Crossplane's chart depend on it. */
export class CrossplaneWebhookConfigurations extends KlutchResource {
  constructor(name: string, args: { kubeconfig: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    super(
      crossplaneWebhooksProvider,
      name,
      { kubeconfig: pulumi.secret(args.kubeconfig) },
      withSecretOutputs(opts, "kubeconfig"),
      "klutch",
      "CrossplaneWebhookConfigurations",
    );
  }
}
