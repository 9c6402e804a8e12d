/* eslint-disable @typescript-eslint/no-require-imports -- the Pulumi side, loaded when asked (implementation.ts) */
import type { GroupProgram } from "../../contract/bridge-target";
import type { ProviderSurface } from "../../contract/provider-surface";
import type { EnvironmentBuilder } from "../../contract/environment-context";
import type { ProxyConnectorConfig } from "./config";
import type {
  HealthReader,
  HealthReaderOptions,
  ImplementationSpec,
  ServerCheck,
  TargetFollower,
  TargetFollowerOptions,
} from "../../contract/implementation";
import { checkProxy } from "./checks";
import { proxyConnector } from "./config";
import { planProxyEndpoints, proxyLocalPorts, withStandInBackends } from "./preview";
import { profileProblem } from "./profile";
import { proxySettings, proxySettingsOf } from "./settings";

/** The implementation as the registry (network/registry.ts) lists it. */
export const proxy: ImplementationSpec<"proxy", typeof proxyConnector, typeof proxySettings> = {
  name: "proxy",
  realisation: "proxy",
  summary:
    "a TCP proxy (HAProxy) per consumer namespace in the data-service cluster; consumers dial the proxy",
  schema: proxyConnector,
  check: checkProxy,
  bridgeSettings: {
    schema: proxySettings,
    of: proxySettingsOf,
    // The consumer namespace's Service type, ports, exposure and CPUs replace the bridge's flags.
    applyToTarget: (target, settings) => ({ ...target, ...settings }),
  },
  planEndpoints: planProxyEndpoints,
  localPorts: proxyLocalPorts,
  previewTarget: withStandInBackends,
  // --dedicated-cpus is the proxy pods' (TcpProxy `dedicatedCpus`).
  targetProblem: (target) => {
    if (target.dedicatedCpus === undefined) return undefined;
    const problem = profileProblem(target.dedicatedCpus);
    return problem && `--dedicated-cpus "${target.dedicatedCpus}": ${problem.replace(/^dedicatedCpus /, "")}`;
  },
  // A NodePort proxy reports a node's address, which the bridge looks up.
  needsNodeList: (connector) => connector.serviceType === "NodePort",
  // A kernel path follows its instance Services' endpoints, in their namespaces; the haproxy
  // hop's health reader reads the same endpoints to say at once that an instance is gone.
  needsInstanceReads: () => true,
  // Only a kernel path writes its own EndpointSlices beside its Service (kernel-path.ts).
  needsSliceWrites: (connector) => connector.hop === "kernel",
  pulumi: {
    environment: () => ({
      build: (require("../environment") as { proxyEnvironment: EnvironmentBuilder<ProxyConnectorConfig> })
        .proxyEnvironment,
    }),
    bridge: () => (require("../bridge-program") as { proxyProgram: GroupProgram }).proxyProgram,
    provider: () => (require("../provider/surface") as { providerSurface: ProviderSurface }).providerSurface,
    // A kernel path follows its instances' ready endpoints.
    follower: () =>
      (require("../instance-backends") as { instanceFollower: (o: TargetFollowerOptions) => TargetFollower })
        .instanceFollower,
    // HAProxy's own health checks say whether a path reaches its instance; for the kernel hop, a dial through it.
    health: () =>
      (require("../path-health") as { proxyHealthReader: (o: HealthReaderOptions) => HealthReader })
        .proxyHealthReader,
    // Whether the data-service cluster takes a NodePort proxy's ports, where only it knows.
    serverCheck: () => (require("../server-check") as { proxyServerCheck: ServerCheck }).proxyServerCheck,
  },
};
