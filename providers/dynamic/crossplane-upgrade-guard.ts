import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import { crossplaneUpgradeProblem, imageCrossplaneVersion } from "../../lib/config/crossplane-versions";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource, withSecretOutputs } from "./klutch-resource";
import { statusCode } from "./kube-errors";

/**
 * Refuses to move a control plane's Crossplane by more than one minor, or back, before the chart
 * is touched: the chart depends on this resource, so its create or update runs first and a
 * refusal leaves the running core as it was. Crossplane upgrades one minor at a time (1.20 → 2.0
 * → 2.1 …) and has no downgrade (lib/config/crossplane-versions.ts says where that comes from).
 *
 * What runs is read from the cluster, not from the stack's state, so a core installed by someone
 * else, or by an earlier stack, is judged the same way: the image tag of the `crossplane`
 * container of Deployment `<namespace>/crossplane` (the chart's name for it), `v1.20.11` as
 * published or `1.20.11-<digest>` as the local nodes' image. No Deployment: nothing to judge.
 *
 * As in package-pause.ts, @kubernetes/client-node is required at run time.
 */

export interface CrossplaneUpgradeGuardInputs {
  /** Admin kubeconfig of the control plane (a secret). */
  kubeconfig: string;
  namespace: string;
  /** The version the chart is about to install. */
  version: string;
  /** Said after a refusal where the usual remedy cannot be had (local clusters). */
  remedy?: string;
}

export { imageCrossplaneVersion } from "../../lib/config/crossplane-versions";

async function runningVersion(inputs: CrossplaneUpgradeGuardInputs): Promise<string | undefined> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  kc.loadFromString(inputs.kubeconfig);
  try {
    const deployment = await kc
      .makeApiClient(lib.AppsV1Api)
      .readNamespacedDeployment({ name: "crossplane", namespace: inputs.namespace });
    const containers = deployment.spec?.template.spec?.containers ?? [];
    const core = containers.find((c) => c.name === "crossplane") ?? containers[0];
    return core?.image ? imageCrossplaneVersion(core.image) : undefined;
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

async function guard(inputs: CrossplaneUpgradeGuardInputs): Promise<void> {
  const running = await runningVersion(inputs);
  const problem = running ? crossplaneUpgradeProblem(running, inputs.version) : undefined;
  if (problem)
    throw new Error(`klutch:crossplane.version ${problem}${inputs.remedy ? `. ${inputs.remedy}` : ""}`);
}

export const crossplaneUpgradeGuardProvider: CompleteProvider<
  CrossplaneUpgradeGuardInputs,
  CrossplaneUpgradeGuardInputs,
  "create" | "diff" | "update"
> = {
  async create(inputs) {
    await guard(inputs);
    return { id: `${inputs.namespace}/crossplane`, outs: inputs };
  },

  diff(_id, olds, news) {
    const changes =
      olds.version !== news.version ||
      olds.namespace !== news.namespace ||
      olds.kubeconfig !== news.kubeconfig;
    return Promise.resolve({ changes });
  },

  async update(_id, _olds, news) {
    await guard(news);
    return { outs: news };
  },
};

export interface CrossplaneUpgradeGuardArgs {
  kubeconfig: pulumi.Input<string>;
  namespace: pulumi.Input<string>;
  version: pulumi.Input<string>;
  remedy?: string;
}

/** Stops an `up` that would move Crossplane by more than one minor (see above). */
export class CrossplaneUpgradeGuard extends KlutchResource {
  constructor(name: string, args: CrossplaneUpgradeGuardArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      crossplaneUpgradeGuardProvider,
      name,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        namespace: args.namespace,
        version: args.version,
        ...(args.remedy ? { remedy: args.remedy } : {}),
      },
      withSecretOutputs(opts, "kubeconfig"),
      "klutch",
      "CrossplaneUpgradeGuard",
    );
  }
}
