import * as fs from "node:fs";
import * as path from "node:path";
import { pulumiEnv } from "../tooling/pulumi-runner";
import type { BridgeView } from "./connections";

/**
 * The Pulumi environment of the bridge's stacks, as bridge/main.ts makes it: the backend
 * in its state dir (or --backend), and the passphrase it keeps there. bridge/main.ts makes
 * these inside its entry function (importing it would start a bridge), so the two file names
 * are repeated here; the project name comes from bridge/stacks.ts. Never creates a passphrase,
 * because a preview must not leave anything behind in the bridge's state.
 */
export function bridgeView(o: {
  stateDir: string;
  backend?: string;
  portRange: { from: number; to: number };
  slotSize: number;
  maxPortsPerGroup?: number;
  bindAddress: string;
}): BridgeView {
  const base: NodeJS.ProcessEnv = { ...process.env };
  base.PULUMI_BACKEND_URL = o.backend ?? `file://${path.join(o.stateDir, "state")}`;
  if (!base.PULUMI_CONFIG_PASSPHRASE && !base.PULUMI_CONFIG_PASSPHRASE_FILE) {
    const file = path.join(o.stateDir, "passphrase");
    // No passphrase file: no bridge has run here, so every group is new and is previewed in
    // a throw-away backend (connections.ts), which this one-off passphrase protects.
    if (fs.existsSync(file)) base.PULUMI_CONFIG_PASSPHRASE_FILE = file;
    else base.PULUMI_CONFIG_PASSPHRASE = "klutch-network-preview-throwaway";
  }
  const env = pulumiEnv("bridge", base);
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
  };
}
