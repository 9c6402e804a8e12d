import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import { pathId } from "../../lib/bridge/model";
import type { WireguardSettings } from "./model/settings";
import { clientConfigKey, flowsKey, renderClientConfig, renderFlowsNft } from "./model/cluster-config";
import { planWireguardGroup } from "./model/group-plan";

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
): () => Promise<Record<string, unknown>> {
  return () => {
    const problems: Record<string, PathProblem> = {};
    const planned = planWireguardGroup(group, paths, { kind: "kubernetes", settings });
    for (const [id, message] of Object.entries(planned.rejected))
      problems[id] = { reason: "InvalidConnection", message };
    const plan = planned.plan;
    if (planned.refusal || !plan || !settings) {
      const message = planned.refusal ?? "internal: no WireGuard plan";
      for (const p of paths) problems[pathId(p)] ??= { reason: "InvalidConnection", message };
      return Promise.resolve({ endpoints: {}, problems });
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
          // One manager per group, the same across re-created stacks: its keys stay its own.
          annotations: { "pulumi.com/patchFieldManager": fieldManager(group) },
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
    return Promise.resolve({ endpoints, problems, flows: patch.metadata.name });
  };
}

/** A field manager name per group (at most 128 characters; the group name may be longer). */
export function fieldManager(group: string): string {
  return `klutch-bridge-${createHash("sha256").update(group).digest("hex").slice(0, 16)}`;
}
