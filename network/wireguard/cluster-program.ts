import * as dns from "node:dns";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import { pathId } from "../../lib/bridge/model";
import { groupFieldManager } from "../../lib/bridge/grouping";
import type { WireguardSettings } from "./model/settings";
import { clientConfigKey, flowsKey, renderClientConfig, renderFlowsNft } from "./model/cluster-config";
import { planWireguardGroup } from "./model/group-plan";
import { hostNames, type HostAddress, type HostAddresses } from "./model/host-addresses";

/**
 * A WireGuard group on clusters (the bridge's `kubernetes` target): the tunnel's pods are the
 * environment stack's (WireguardTunnel with bridgeConnections), so the bridge only publishes
 * the group's flows and forwarder list in the gateway's flows ConfigMap, as a server-side apply
 * patch with a field manager of the group's own (cluster-config.ts says how the pods follow).
 * Every connection's hostForConsumer is the client's headless Service; its port the forwarder's.
 * A destroyed group's patch takes its keys away again.
 *
 * Ready here means published: the bridge has no credentials for the app cluster, so it does not
 * see the client's forwarder listen. The client picks its list up within seconds of the gateway
 * pod seeing the ConfigMap change (the kubelet's sync period, one minute by default).
 */
export function clusterWireguardProgram(
  group: string,
  paths: NetworkPathObject[],
  kubeconfig: string,
  settings: WireguardSettings | undefined,
  resolve: (name: string) => Promise<HostAddress> = resolveIpv4,
): () => Promise<Record<string, unknown>> {
  return async () => {
    const problems: Record<string, PathProblem> = {};
    // Names resolve here, in the bridge's pod on the control plane: the network the gateway
    // pod is in, so a Service's name gives the ClusterIP the gateway forwards to. Each run
    // resolves again, so a re-created Service is followed at the group's next reconcile.
    const names = hostNames(paths.map((p) => p.spec.instanceHost));
    const hosts: HostAddresses = Object.fromEntries(
      await Promise.all(names.map(async (n) => [n, await resolve(n)] as const)),
    );
    const planned = planWireguardGroup(group, paths, { kind: "kubernetes", settings, hosts });
    const unresolved = new Set(planned.unresolved);
    for (const [id, message] of Object.entries(planned.rejected))
      problems[id] = { reason: unresolved.has(id) ? "HostUnresolved" : "InvalidConnection", message };
    const plan = planned.plan;
    if (planned.refusal || !plan || !settings) {
      const message = planned.refusal ?? "internal: no WireGuard plan";
      for (const p of paths) problems[pathId(p)] ??= { reason: "InvalidConnection", message };
      return { endpoints: {}, problems };
    }

    const provider = new k8s.Provider("data-plane", { kubeconfig: pulumi.secret(kubeconfig) });
    const address = settings.clientAddress;
    // Named so the network preview shows it as the group's WireGuard hop (engine-events.ts hopKind).
    const patch = new k8s.core.v1.ConfigMapPatch(
      "wireguard-flows",
      {
        metadata: {
          name: settings.flows.name,
          namespace: settings.flows.namespace,
          annotations: {
            // One manager per group, the same across re-created stacks: its keys stay its own,
            // and the bridge's drift watch tells someone else's change to them by it.
            "pulumi.com/patchFieldManager": groupFieldManager(group),
            // A hand's edit (kubectl edit, patch) takes the edited keys' ownership: putting them
            // back under the group's manager then conflicts unless forced (server-side apply's
            // conflict rule; pulumi/pulumi-kubernetes#2630). The keys are the group's alone.
            "pulumi.com/patchForce": "true",
          },
        },
        data: {
          [flowsKey(address)]: renderFlowsNft(group, plan.flows, plan.services),
          [clientConfigKey(address)]: renderClientConfig(group, plan.forwarders),
        },
      },
      { provider },
    );
    // Known from the plan (the preview predicts them the same way); the bridge reads them
    // only after an update that applied the patch.
    const endpoints = planned.endpoints;
    return { endpoints, problems, flows: patch.metadata.name };
  };
}

/** How long one name may take to resolve: a slow resolver must not hold the group's run. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** A name's IPv4 address by the system's resolver (the pod's cluster DNS), or why none. */
export async function resolveIpv4(name: string): Promise<HostAddress> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HostAddress>((resolve) => {
    timer = setTimeout(
      () => resolve({ problem: `no answer within ${RESOLVE_TIMEOUT_MS / 1000} s` }),
      RESOLVE_TIMEOUT_MS,
    );
  });
  const lookup = dns.promises
    .lookup(name, { family: 4 })
    .then((r): HostAddress => ({ address: r.address }))
    .catch((e: NodeJS.ErrnoException): HostAddress => ({ problem: e.code ?? e.message }));
  try {
    return await Promise.race([lookup, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
