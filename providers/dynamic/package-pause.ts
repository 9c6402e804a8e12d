import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource, withSecretOutputs } from "./klutch-resource";
import { statusCode } from "./kube-errors";

/**
 * Pauses Crossplane's package manager on one Configuration just before the Configuration is
 * deleted, so that its deletion takes seconds, not up to a minute and more.
 *
 * Why (Crossplane 1.20.11, internal/controller/pkg/manager/reconciler.go): the package manager
 * reconciles a Configuration that is being deleted like any other. While the Configuration's
 * foreground deletion waits for its revision and the revision's XRDs and Compositions to go, the
 * package manager makes the revision again, and the revision controller its objects, until the
 * garbage collector happens to win: 3 s, 10 s or 64 s for the same package in one environment's
 * destroy (2026-11-29). A package annotated `crossplane.io/paused: "true"` is left alone (the
 * reconciler returns before it looks at revisions), so the garbage collector deletes the revision
 * and its objects once. The revision's own controller still removes its finalizer: it handles a
 * deleted revision before it checks for a pause.
 *
 * The resource is created after the Configuration and depends on it, so Pulumi deletes it first:
 * its delete pauses the package. Its create and update clear the annotation, so a destroy that
 * stopped after pausing leaves nothing paused once `up` runs again.
 *
 * As in export-request.ts, @kubernetes/client-node is required at run time: an import at the
 * top would make the closure serializer try to copy the library by value.
 */

export interface PackagePauseInputs {
  /** Admin kubeconfig of the control plane (a secret). */
  kubeconfig: string;
  /** The Configuration's name (cluster-scoped, pkg.crossplane.io/v1). */
  configuration: string;
}

const PAUSED = "crossplane.io/paused";

async function setPaused(kubeconfig: string, configuration: string, paused: boolean): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  kc.loadFromString(kubeconfig);
  const api = kc.makeApiClient(lib.CustomObjectsApi);
  try {
    await api.patchClusterCustomObject(
      {
        group: "pkg.crossplane.io",
        version: "v1",
        plural: "configurations",
        name: configuration,
        // A JSON merge patch: null removes the key.
        body: { metadata: { annotations: { [PAUSED]: paused ? "true" : null } } },
      },
      lib.setHeaderOptions("Content-Type", lib.PatchStrategy.MergePatch),
    );
  } catch (err) {
    // Not there (yet, or any more): nothing to pause or resume.
    if (statusCode(err) !== 404) throw err;
  }
}

export const packagePauseProvider: CompleteProvider<
  PackagePauseInputs,
  PackagePauseInputs,
  "create" | "diff" | "update" | "delete"
> = {
  async create(inputs) {
    await setPaused(inputs.kubeconfig, inputs.configuration, false);
    return { id: inputs.configuration, outs: inputs };
  },

  diff(_id, olds, news) {
    const replaces = olds.configuration === news.configuration ? [] : ["configuration"];
    return Promise.resolve({ changes: replaces.length > 0 || olds.kubeconfig !== news.kubeconfig, replaces });
  },

  async update(_id, _olds, news) {
    await setPaused(news.kubeconfig, news.configuration, false);
    return { outs: news };
  },

  async delete(_id, props) {
    await setPaused(props.kubeconfig, props.configuration, true);
  },
};

export interface PackagePauseArgs {
  kubeconfig: pulumi.Input<string>;
  configuration: pulumi.Input<string>;
}

/** Pauses a Configuration's package manager when this resource is deleted (see above). */
export class PackagePause extends KlutchResource {
  constructor(name: string, args: PackagePauseArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      packagePauseProvider,
      name,
      { kubeconfig: pulumi.secret(args.kubeconfig), configuration: args.configuration },
      withSecretOutputs(opts, "kubeconfig"),
      "klutch",
      "PackagePause",
    );
  }
}
