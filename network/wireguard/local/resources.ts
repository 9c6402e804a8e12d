import * as pulumi from "@pulumi/pulumi";
import { localAllowedHostsProvider } from "./allowed-hosts-provider";
import { localWireguardClientProvider } from "./client-provider";
import { localTcpForwarderProvider } from "./forwarder-provider";
import type { LocalAllowedHostsInputs, LocalTcpForwarderInputs, LocalWireguardClientInputs } from "./types";
import { KlutchResource } from "../../../providers/dynamic/klutch-resource";

/**
 * The WireGuard path of the bridge's `local` target, where no kubelet runs the rendered pods:
 * the same plan, run as wireguard-go processes in network namespaces this project creates (the
 * way the local proxy runs as HAProxy processes). The resources the bridge program declares
 * (bridge-program.ts); their providers live beside this file, one each:
 *
 * - `LocalWireguardClient` (client-provider.ts), one per group, and with the first of them the
 *   shared gateway (gateway.ts);
 * - `LocalWireguardAllowedHosts` (allowed-hosts-provider.ts), one per group;
 * - `LocalTcpForwarder` (forwarder-provider.ts), one per connection.
 *
 * The daemons are supervised through pid files (process-supervision.ts) and outlive the engine
 * that started them.
 */

/** A resource's arguments: each of its provider's inputs, as a Pulumi input. */
type ArgsOf<Inputs> = { [K in keyof Inputs]: pulumi.Input<Inputs[K]> };

export type LocalWireguardClientArgs = ArgsOf<LocalWireguardClientInputs>;
export type LocalAllowedHostsArgs = ArgsOf<LocalAllowedHostsInputs>;
export type LocalTcpForwarderArgs = ArgsOf<LocalTcpForwarderInputs>;

/** One group's client end of the local tunnel (and, shared, the gateway). */
export class LocalWireguardClient extends KlutchResource {
  declare public readonly tunnelAddress: pulumi.Output<string>;
  declare public readonly gatewayPublicKey: pulumi.Output<string>;
  declare public readonly endpoint: pulumi.Output<string>;
  declare public readonly netns: pulumi.Output<string>;
  declare public readonly ifname: pulumi.Output<string>;

  constructor(name: string, args: LocalWireguardClientArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      localWireguardClientProvider,
      name,
      {
        ...args,
        privateKey: pulumi.secret(args.privateKey),
        tunnelAddress: undefined,
        gatewayPublicKey: undefined,
        endpoint: undefined,
      },
      { ...opts, additionalSecretOutputs: ["privateKey"] },
      "klutch",
      "LocalWireguardClient",
    );
  }
}

/** The data-service hosts one client may reach: its AllowedIPs, routes and gateway flows. */
export class LocalWireguardAllowedHosts extends KlutchResource {
  constructor(name: string, args: LocalAllowedHostsArgs, opts?: pulumi.CustomResourceOptions) {
    super(localAllowedHostsProvider, name, args, opts, "klutch", "LocalWireguardAllowedHosts");
  }
}

/** One connection's forwarder in the client namespace: what hostForConsumer:port names. */
export class LocalTcpForwarder extends KlutchResource {
  /** Why it does not listen, and what to change; undefined while it works. */
  declare public readonly failure: pulumi.Output<string | undefined>;

  constructor(name: string, args: LocalTcpForwarderArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      localTcpForwarderProvider,
      name,
      { ...args, failure: undefined },
      opts,
      "klutch",
      "LocalTcpForwarder",
    );
  }
}
