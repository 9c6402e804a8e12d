import { bridgeStackEnv } from "../bridge/state-dir";
import * as path from "node:path";
import {
  ensureKubernetesPlugin,
  LOCAL_PASSPHRASE_FILE,
  preparePulumiHome,
  pulumiEnv,
} from "../../host/automation/pulumi-runner";
import type { BridgeView } from "./group-preview";

/**
 * The Pulumi environment of the bridge's stacks, as programs/bridge/main.ts makes it (programs/bridge/state-dir.ts:
 * the backend in its state dir or --backend, and the passphrase it keeps there). Never creates
 * anything, because a preview must not leave anything behind in the bridge's state.
 */
export function bridgeView(o: {
  stateDir: string;
  backend?: string;
  portRange: { from: number; to: number };
  slotSize: number;
  maxPortsPerGroup?: number;
  bindAddress: string;
  target: BridgeView["target"];
  settings?: BridgeView["settings"];
  nodes?: BridgeView["nodes"];
  /** The passphrase of the bridge's stacks (a deployed bridge's, from its Secret). */
  passphrase?: string;
}): BridgeView {
  // The bridge's stacks have a passphrase of their own: never the environment stack's, which
  // `host/scripts/toolchain.sh env --local-stack` may have exported for the same shell.
  const own = { ...process.env };
  if (o.passphrase !== undefined) {
    own.PULUMI_CONFIG_PASSPHRASE = o.passphrase;
    delete own.PULUMI_CONFIG_PASSPHRASE_FILE;
  } else if (
    own.PULUMI_CONFIG_PASSPHRASE_FILE &&
    path.resolve(own.PULUMI_CONFIG_PASSPHRASE_FILE) === LOCAL_PASSPHRASE_FILE
  ) {
    delete own.PULUMI_CONFIG_PASSPHRASE_FILE;
  }
  const base = bridgeStackEnv({
    base: own,
    stateDir: o.stateDir,
    ...(o.backend ? { backend: o.backend } : {}),
    create: false,
    throwawayPassphrase: "klutch-network-preview-throwaway",
  });
  const env = pulumiEnv("bridge", base);
  preparePulumiHome(env);
  // The kubernetes target's programs need the Kubernetes provider plugin, as the bridge's do.
  if (o.target.kind === "kubernetes") ensureKubernetesPlugin(env);
  // The Automation API spawns `pulumi` with process.env plus envVars; PATH must be the toolchain's.
  process.env.PATH = env.PATH;
  return {
    stateDir: o.stateDir,
    pulumiEnv: Object.fromEntries(
      Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"),
    ),
    portRange: o.portRange,
    slotSize: o.slotSize,
    ...(o.maxPortsPerGroup !== undefined ? { maxPortsPerGroup: o.maxPortsPerGroup } : {}),
    bindAddress: o.bindAddress,
    target: o.target,
    ...(o.settings ? { settings: o.settings } : {}),
    ...(o.nodes ? { nodes: o.nodes } : {}),
  };
}
