import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ExportedApiConfig } from "../../lib/config/schema";
import { exportTemplateManifest } from "../../lib/bind/export-template";

export interface ExportedApiArgs {
  /** The control plane's Kubernetes provider. */
  provider: k8s.Provider;
  /** Where the backend looks for templates (Klutch uses crossplane-system). */
  namespace: pulumi.Input<string>;
  api: ExportedApiConfig;
  labels?: Record<string, string>;
}

/**
 * One data-service API offered for binding: an APIServiceExportTemplate that selects the
 * API's resource and claims the objects (secrets, configmaps) that travel with it.
 */
export class ExportedApi extends pulumi.ComponentResource {
  public readonly templateName: pulumi.Output<string>;

  constructor(name: string, args: ExportedApiArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bind:ExportedApi", name, {}, opts);
    const manifest = exportTemplateManifest(args.api, args.labels);
    const template = new k8s.apiextensions.CustomResource(
      `${name}-template`,
      { ...manifest, metadata: { ...manifest.metadata, namespace: args.namespace } },
      { parent: this, provider: args.provider },
    );
    this.templateName = template.metadata.name;
    this.registerOutputs({ templateName: this.templateName });
  }
}
