import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { apiObjects } from "../crossplane/api-objects";
import type { ConfigurationPackage, PackageDelivery } from "../crossplane/configuration-package";
import { XRD_DELETE_TIMEOUT } from "../crossplane/xrd-resource";
import { connectorXrd } from "../../lib/connector-api/xrd";
import {
  CompositionModel,
  compositionName,
  noopComposition,
  pulumiBackedComposition,
  renderPipeline,
  type PipelineFunction,
  renderResourcesMode,
} from "../../lib/connector-api/compositions";
import { crossplaneNetworkPathRole, networkPathCrd } from "../../lib/connector-api/network-path-crd";
import { IMPLEMENTATIONS, IMPLEMENTATION_NAMES, isImplementationName } from "../../network/registry";

export interface NetworkConnectorApiArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /** Implementations to offer besides NOOP (always offered), by registry name, e.g. ["proxy", "wireguard"]. */
  implementations: string[];
  /** Implementation connections get when they select none (Klutch's default is the proxy). */
  defaultImplementation: string;
  /**
   * "Pipeline" or "Resources" (a Crossplane core without function pods: a local one as a
   * process). Both forms come from the same composition models.
   */
  compositionMode: "Pipeline" | "Resources";
  /** The Pipeline's function: function-patch-and-transform unless given (Klutch's own on local nodes). */
  pipelineFunction?: PipelineFunction;
  labels: Record<string, string>;
  /**
   * Ship the XRD and compositions as the Configuration package `klutch-network-connector`
   * (pushed to the environment's registry) instead of as loose objects.
   */
  packaging?: PackageDelivery;
  /** Crossplane's installation, so its CRDs exist before the XRD and compositions. */
  dependsOn?: pulumi.Input<pulumi.Resource>[];
}

/** The connector API's Configuration package. */
export const CONNECTOR_PACKAGE_NAME = "klutch-network-connector";

/**
 * The network connector API on the control plane: the XTCPConnection XRD (claim
 * TCPConnection), a composition per implementation (NOOP always), and the NetworkPath CRD that
 * Pulumi-backed compositions compose. Type token `klutch:network:ConnectorApi`.
 */
export class NetworkConnectorApi extends pulumi.ComponentResource {
  public readonly compositions: string[];
  /** The implementations a connection may ask for, each with its composition: NOOP and the offered ones. */
  public readonly implementations: string[];
  /** The Configuration package that ships the API, when packaged. */
  public readonly package?: ConfigurationPackage;

  constructor(name: string, args: NetworkConnectorApiArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before registering the component itself, so bad input leaves nothing behind.
    const unknown = args.implementations.filter((i) => !isImplementationName(i));
    if (unknown.length > 0) {
      throw new Error(
        `implementations ${unknown.map((i) => `"${i}"`).join(", ")} not known; known: ${IMPLEMENTATION_NAMES.join(", ")}`,
      );
    }
    // NOOP (the one implementation the registry marks ignored) always gets its inert marker
    // composition; the others compose a NetworkPath the bridge realises.
    const ignored = IMPLEMENTATIONS.filter((i) => i.realisation === "ignored").map((i) => i.name as string);
    const implementations = [...new Set(args.implementations)].filter((i) => !ignored.includes(i));
    if (
      !ignored.includes(args.defaultImplementation) &&
      !implementations.includes(args.defaultImplementation)
    ) {
      throw new Error(
        `defaultImplementation "${args.defaultImplementation}" is not among ${[...ignored, ...implementations].join(", ")}`,
      );
    }
    super("klutch:network:ConnectorApi", name, {}, opts);
    const child = { parent: this, provider: args.provider, dependsOn: args.dependsOn };

    // Its delete waits until no NetworkPath is left (the CRD finalizer); the teardown drain
    // has released them before, so a bounded wait makes a regression an error, not 10 minutes.
    const pathCrd = new k8s.apiextensions.v1.CustomResourceDefinition(
      `${name}-networkpaths`,
      networkPathCrd(args.labels),
      { ...child, customTimeouts: { delete: XRD_DELETE_TIMEOUT } },
    );
    // Crossplane core composes NetworkPaths with its own ServiceAccount when it runs as a pod;
    // ordered like the CRD, so it goes only after the paths do.
    new k8s.rbac.v1.ClusterRole(
      `${name}-crossplane-networkpaths`,
      crossplaneNetworkPathRole(args.labels),
      child,
    );
    const models: CompositionModel[] = [noopComposition(), ...implementations.map(pulumiBackedComposition)];
    const render = (model: CompositionModel) =>
      args.compositionMode === "Pipeline"
        ? renderPipeline(model, args.labels, args.pipelineFunction)
        : renderResourcesMode(model, args.labels);
    this.package = apiObjects(this, `${name}-package`, {
      provider: args.provider,
      xrds: [
        {
          resourceName: `${name}-xrd`,
          object: connectorXrd(compositionName(args.defaultImplementation), args.labels),
        },
      ],
      compositions: models.map((model) => ({
        resourceName: `${name}-${model.name}`,
        object: render(model),
      })),
      ...(args.packaging ? { packaging: args.packaging } : {}),
      package: {
        name: CONNECTOR_PACKAGE_NAME,
        description:
          "Klutch's network connector API: the XTCPConnection XRD (claim TCPConnection) and a composition per offered implementation.",
      },
      labels: args.labels,
      ...(args.dependsOn ? { dependsOn: args.dependsOn } : {}),
      compositionsAfter: [pathCrd],
    }).package;
    this.compositions = models.map((m) => m.name);
    this.implementations = [...ignored, ...implementations];
    this.registerOutputs({ compositions: this.compositions });
  }
}
