import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import { statusCode } from "./kube-errors";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource, withSecretOutputs } from "./klutch-resource";

/**
 * An APIServiceExportRequest as a one-shot Pulumi resource.
 *
 * The backend treats a request as a message, not as desired state
 * (controllers/serviceexportrequest/serviceexportrequest_reconcile.go at v1.4.0/v1.5.0): it
 * creates the APIServiceExport `<resource>.<group>` from it, marks it Succeeded, or Failed
 * when its CRD is still missing a minute after the request was made, and deletes every request
 * at the first reconcile after it is 10 minutes old (by creationTimestamp; usually the
 * 30-minute resync, see row B15 in lib/bind/contract.ts). As a plain Kubernetes resource it would drift (a refresh sees it gone and
 * the next up re-creates it, forever) and a first bring-up before the CRD exists would leave
 * a Failed request behind. So, like `kubectl bind apiservice` (plugin/bind.go), this resource:
 *  - creates the request once and, where a backend runs, waits until the export exists
 *    (Failed → an error with the backend's terminal message);
 *  - never reads the request back: its disappearance is the backend doing its job;
 *  - on delete (the API unbound, the app cluster removed) deletes the request if still there
 *    and the APIServiceExport made from it, which ends the binding's sync of that API.
 *
 * The dynamic provider runs in a plain Node process. @kubernetes/client-node is required at
 * run time there (from the project's node_modules on NODE_PATH): an import at the top would
 * make the closure serializer try to copy the library by value, which it cannot.
 */

export interface ExportRequestInputs {
  /** Admin kubeconfig of the control plane (a secret). */
  kubeconfig: string;
  namespace: string;
  /** `<resource>.<group>`, the name /bind gives it and the name of the export made from it. */
  name: string;
  spec: Record<string, unknown>;
  labels: Record<string, string>;
  /** Wait for the backend to make the export; off where no backend runs (local clusters). */
  awaitExport: boolean;
  timeoutSeconds: number;
}

export interface ExportRequestOutputs extends ExportRequestInputs {
  /** Whether the export existed when the create finished. */
  exported: boolean;
}

const GROUP = "klutch.anynines.com";
const VERSION = "v1alpha1";

function clients(kubeconfig: string): k8s.CustomObjectsApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  kc.loadFromString(kubeconfig);
  return kc.makeApiClient(lib.CustomObjectsApi);
}

async function getOrUndefined(api: k8s.CustomObjectsApi, plural: string, namespace: string, name: string) {
  try {
    return (await api.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural,
      name,
    })) as {
      status?: {
        phase?: string;
        terminalMessage?: string;
        conditions?: { type: string; message?: string }[];
      };
    };
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

async function deleteIfThere(api: k8s.CustomObjectsApi, plural: string, namespace: string, name: string) {
  try {
    await api.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name });
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
  }
}

/** Waits for the backend's answer to a request; resolves whether the export exists. */
async function awaitExport(api: k8s.CustomObjectsApi, ns: string, name: string, timeoutSeconds: number) {
  const where = `APIServiceExportRequest ${ns}/${name}`;
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last = "the backend has not answered yet";
  for (;;) {
    if (await getOrUndefined(api, "apiserviceexports", ns, name)) return true;
    const request = await getOrUndefined(api, "apiserviceexportrequests", ns, name);
    if (!request) throw new Error(`${where} was deleted by the service provider before its export appeared`);
    const status = request.status ?? {};
    if (status.phase === "Failed") {
      throw new Error(
        `${where} failed: ${status.terminalMessage ?? "no message"}; fix the cause (often: the data-service CRD is not installed on the control plane) and run up again`,
      );
    }
    if (status.phase === "Succeeded") return true;
    last = status.conditions?.find((c) => c.type === "ExportsReady")?.message ?? last;
    if (Date.now() > deadline) {
      throw new Error(
        `${where}: no APIServiceExport after ${timeoutSeconds}s (${last}); is the klutch-bind backend running? Set bind.awaitExports to false where no backend runs`,
      );
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export const exportRequestProvider: CompleteProvider<
  ExportRequestInputs,
  ExportRequestOutputs,
  "create" | "diff" | "update" | "delete"
> = {
  async create(inputs) {
    const api = clients(inputs.kubeconfig);
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "APIServiceExportRequest",
      metadata: { name: inputs.name, namespace: inputs.namespace, labels: inputs.labels },
      spec: inputs.spec,
    };
    try {
      await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: inputs.namespace,
        plural: "apiserviceexportrequests",
        body,
      });
    } catch (err) {
      // A request of the same name still pending (an earlier run cut short) is the same message.
      if (statusCode(err) !== 409) throw err;
    }
    const exported = inputs.awaitExport
      ? await awaitExport(api, inputs.namespace, inputs.name, inputs.timeoutSeconds)
      : false;
    return { id: `${inputs.namespace}/${inputs.name}`, outs: { ...inputs, exported } };
  },

  diff(_id, olds, news) {
    // spec is immutable in the CRD, and a request is a message: anything it says needs a new one.
    const replaces = (["namespace", "name", "spec"] as const).filter(
      (k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]),
    );
    const changes =
      replaces.length > 0 ||
      (["kubeconfig", "labels", "awaitExport", "timeoutSeconds"] as const).some(
        (k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]),
      );
    return Promise.resolve({ changes, replaces, deleteBeforeReplace: true });
  },

  update(_id, olds, news) {
    // Only the credentials or waiting settings changed: nothing to tell the backend again.
    return Promise.resolve({ outs: { ...news, exported: olds.exported } });
  },

  async delete(_id, props) {
    const api = clients(props.kubeconfig);
    await deleteIfThere(api, "apiserviceexportrequests", props.namespace, props.name);
    await deleteIfThere(api, "apiserviceexports", props.namespace, props.name);
  },
};

export interface ExportRequestArgs {
  kubeconfig: pulumi.Input<string>;
  namespace: pulumi.Input<string>;
  name: pulumi.Input<string>;
  spec: pulumi.Input<Record<string, unknown>>;
  labels?: pulumi.Input<Record<string, string>>;
  awaitExport: pulumi.Input<boolean>;
  timeoutSeconds?: pulumi.Input<number>;
}

/** One APIServiceExportRequest, created once (see above). */
export class ExportRequest extends KlutchResource {
  declare public readonly exported: pulumi.Output<boolean>;

  constructor(name: string, args: ExportRequestArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      exportRequestProvider,
      name,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        namespace: args.namespace,
        name: args.name,
        spec: args.spec,
        labels: args.labels ?? {},
        awaitExport: args.awaitExport,
        timeoutSeconds: args.timeoutSeconds ?? 600,
        exported: undefined,
      },
      withSecretOutputs(opts, "kubeconfig"),
      "klutch",
      "ExportRequest",
    );
  }
}
