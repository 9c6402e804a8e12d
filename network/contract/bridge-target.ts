import type { NetworkPathObject } from "../../lib/bridge/model";
import type { PortRange } from "../../lib/net/port-range";
import type { Exposure } from "./exposure";

/**
 * Where the bridge builds a group's path (a consumer namespace and implementation): this
 * machine, or the data-service cluster. The fields besides `settings` are the bridge's own
 * flags (programs/bridge/target-options.ts); an implementation's spec may overlay them with its settings
 * (`bridgeSettings.applyToTarget`, as the proxy does with its Service type and ports).
 */
export type BridgeTarget =
  | {
      kind: "local";
      stateDir: string;
      bindAddress: string;
      /** The group's ports: the hull of its slots in the bridge's range (lib/bridge/slots.ts). */
      portRange: PortRange;
      /** Ports of portRange in other groups' slots, between this group's blocks. */
      reservedPorts?: number[];
      /** The group's implementation's own settings (none on this machine: no environment stack). */
      settings?: undefined;
    }
  | {
      kind: "kubernetes";
      kubeconfig: string;
      namespace: string;
      portRange: PortRange;
      serviceType: string;
      /** Who may connect (TcpProxy `exposure`), from the environment's bridge settings. */
      exposure?: Exposure;
      /** kube-proxy alone instead of HAProxy pods (network/proxy/model/kernel-path.ts); HAProxy when unset. */
      hop?: "haproxy" | "kernel";
      /**
       * For the kernel hop: each instance Service's ready endpoints by `host:port`, as the bridge
       * read them before the run (network/proxy/instance-backends.ts); a problem where it could not.
       */
      backends?: Record<string, { backends: { address: string; port: number }[] } | { problem: string }>;
      /** Whole CPUs per proxy pod (TcpProxy `dedicatedCpus`); shared CPUs when unset. */
      dedicatedCpus?: number;
      /** Do not wait for the proxy's pods (a cluster without kubelets, e.g. the local ones). */
      skipAwait?: boolean;
      /** The proxy pods' HAProxy image (TcpProxy `image`); its pinned default when unset. */
      proxyImage?: string;
      /** For NodePort: the node address consumers dial (`--node-host`, else a Ready node's). */
      nodeHost?: string;
      /**
       * Node ports the API server refused as already allocated, kept out of the group's port
       * plan for a while (lib/bridge/node-port-refusals.ts).
       */
      heldOutPorts?: number[];
      /**
       * The group's implementation's own settings from the environment (its spec's
       * `bridgeSettings.schema`, checked when the bridge read them), when the stack gave any.
       */
      settings?: unknown;
    };

/** The bridge's Pulumi program for one group (a consumer namespace and implementation). */
export type GroupProgram = (
  group: string,
  paths: NetworkPathObject[],
  target: BridgeTarget,
) => () => Promise<Record<string, unknown>>;
