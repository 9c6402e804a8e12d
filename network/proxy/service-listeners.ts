import type * as k8s from "@kubernetes/client-node";
import * as pulumi from "@pulumi/pulumi";
import type { CompleteProvider } from "../../providers/dynamic/provider-type";
import { listenerReadiness } from "./model/listener-readiness";
import { KlutchResource } from "../../providers/dynamic/klutch-resource";

/**
 * A proxy's listeners, proven in service: the bridge's replacement for pulumi-kubernetes'
 * Service await, which waits 10 s after every Endpoints change (model/listener-readiness.ts
 * says why and what is checked instead). Created and updated after the proxy's Deployment has
 * rolled out (its await is kept) and its Service is applied; `endpoints` of the TcpProxy wait
 * for it, so the bridge reports a path Ready only once the Service's EndpointSlices publish
 * the listener ports from Ready pods of the current config only. A pod is Ready when its
 * readiness probe, HAProxy's own health page, answers, and HAProxy serves it only after it has
 * bound every listener of its config, so such a pod listens on every port.
 *
 * Like the awaiter it replaces (which watches the Endpoints only), it does not wait for
 * kube-proxy to program the new rules, which follows the slices within its sync period (1 s).
 * It does not dial the listeners either: the address consumers dial (a node's, a balancer's) is
 * not one the bridge can be assumed to reach, and a connect it cannot make would say nothing.
 *
 * Serialized like port-allocation.ts: the judgement and the TCP attempt are captured by
 * value, the Kubernetes client is required at run time from the bridge's node_modules.
 */

export interface ServiceListenersInputs {
  /** Admin kubeconfig of the proxy's cluster (a secret; never part of the outputs). */
  kubeconfig: string;
  namespace: string;
  service: string;
  /** The Deployment's pod selector. */
  selector: Record<string, string>;
  /** The `checksum/config` annotation of the current pod template. */
  checksum: string;
  /** The listener ports (the Service's ports; empty when the proxy has no connection). */
  ports: number[];
  /** How long to wait before failing the update; default 120 000. */
  timeoutMs?: number;
}

export type ServiceListenersOutputs = Omit<ServiceListenersInputs, "kubeconfig"> & {
  /** The pods the Service published when it was in service. */
  pods: string[];
};

const POLL_MS = 200;
const DEFAULT_TIMEOUT_MS = 120_000;

async function waitInService(inputs: ServiceListenersInputs): Promise<ServiceListenersOutputs> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  kc.loadFromString(inputs.kubeconfig);
  const discovery = kc.makeApiClient(lib.DiscoveryV1Api);
  const core = kc.makeApiClient(lib.CoreV1Api);
  const { namespace, service, checksum, ports } = inputs;
  const labelSelector = Object.entries(inputs.selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const deadline = Date.now() + (inputs.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let waitingFor = "the first look at the Service's EndpointSlices";

  while (Date.now() < deadline) {
    const [slices, pods] = await Promise.all([
      discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=${service}`,
      }),
      core.listNamespacedPod({ namespace, labelSelector }),
    ]);
    const checksums = new Map(
      pods.items.map((p) => [p.metadata?.name ?? "", p.metadata?.annotations?.["checksum/config"]]),
    );
    const judged = listenerReadiness(slices.items, checksums, checksum, ports);
    if (judged.ready) {
      // The outputs are stored in plain text: everything but the kubeconfig.
      const visible: Omit<ServiceListenersInputs, "kubeconfig"> = {
        namespace,
        service,
        selector: inputs.selector,
        checksum,
        ports,
        ...(inputs.timeoutMs !== undefined ? { timeoutMs: inputs.timeoutMs } : {}),
      };
      return { ...visible, pods: judged.pods };
    }
    waitingFor = judged.waitingFor;
    await sleep(POLL_MS);
  }
  throw new Error(
    `Service ${namespace}/${service} did not serve the proxy's listeners within ${Math.round(
      (inputs.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000,
    )} s: waiting for ${waitingFor}`,
  );
}

export const serviceListenersProvider: CompleteProvider<
  ServiceListenersInputs,
  ServiceListenersOutputs,
  "create" | "diff" | "update"
> = {
  async create(inputs) {
    return { id: `${inputs.namespace}/${inputs.service}`, outs: await waitInService(inputs) };
  },

  diff(_id, olds, news) {
    // A new config or port set rolls the pods or changes the Service: wait for it again.
    const changed =
      olds.checksum !== news.checksum ||
      olds.ports.join(",") !== news.ports.join(",") ||
      olds.service !== news.service ||
      olds.namespace !== news.namespace;
    return Promise.resolve({ changes: changed, replaces: [] });
  },

  async update(_id, _olds, news) {
    return { outs: await waitInService(news) };
  },
};

export interface ServiceListenersArgs {
  kubeconfig: pulumi.Input<string>;
  namespace: pulumi.Input<string>;
  service: pulumi.Input<string>;
  selector: Record<string, string>;
  checksum: pulumi.Input<string>;
  ports: pulumi.Input<number[]>;
  timeoutMs?: number;
}

/** Waits, at create and at every change of config or ports, until the proxy's Service serves them. */
export class ServiceListeners extends KlutchResource {
  declare public readonly pods: pulumi.Output<string[]>;

  constructor(name: string, args: ServiceListenersArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      serviceListenersProvider,
      name,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        namespace: args.namespace,
        service: args.service,
        selector: args.selector,
        checksum: args.checksum,
        ports: args.ports,
        ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}),
        pods: undefined,
      },
      opts,
      "klutch",
      "ServiceListeners",
    );
  }
}
