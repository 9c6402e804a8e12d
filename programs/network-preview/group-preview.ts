import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { bridgeStatePaths } from "../bridge/state-dir";
import { PROJECT } from "../bridge/workspaces";
import { groupImplementation, stackName } from "../../lib/bridge/model";
import { parseSlots, type Slots } from "../../lib/bridge/slots";
import type { ConnectionInput, PortGroupInput } from "../../lib/network-preview/model";
import { bridgeProgramOf } from "../../network/plugins/bridge-programs";
import { StepCollector } from "./engine-events";
import { assemble } from "./plan/assemble";
import { groupTarget } from "./plan/group-target";
import type { BridgeLayout, GroupPlan } from "./plan/model";

/** The bridge as the preview runs its programs: its layout, plus where it keeps its state. */
export interface BridgeView extends BridgeLayout {
  stateDir: string;
  /** Environment for the Pulumi CLI: backend, passphrase, PATH (see pulumiEnv). */
  pulumiEnv: Record<string, string>;
}

/** The port slots the bridge has placed so far (its slots file), none before it realised anything. */
function readSlots(stateDir: string): Slots {
  try {
    return parseSlots(fs.readFileSync(bridgeStatePaths(stateDir).slots, "utf8"));
  } catch {
    // No slots yet: a bridge that has realised nothing.
    return {};
  }
}

/** Whether the bridge's backend holds this stack; any backend but a local one is assumed to. */
function stackExists(bridge: BridgeView, stack: string): boolean {
  const backend = bridge.pulumiEnv.PULUMI_BACKEND_URL ?? "";
  if (!backend.startsWith("file://")) return true;
  const dir = path.join(backend.slice("file://".length), ".pulumi", "stacks", PROJECT);
  return ["json", "json.gz"].some((ext) => fs.existsSync(path.join(dir, `${stack}.${ext}`)));
}

/**
 * Previews one group through the bridge's own program (its implementation's, bridgeProgramOf) on the
 * bridge's own stack, as `pulumi preview --diff` would, and predicts the ports the way the
 * PortAllocation provider will compute them at `up`: its planner, fed the state the preview
 * read (old assignments and release history) and the inputs the program produced.
 */
export async function previewGroup(
  bridge: BridgeView,
  g: GroupPlan,
  progress: (line: string) => void,
): Promise<{ connections: ConnectionInput[]; ports?: PortGroupInput; notes: string[] }> {
  const implementation = groupImplementation(g.key);
  const notes: string[] = [];
  const program = bridgeProgramOf(g.key);
  if (!program) {
    notes.push(`group ${g.key}: the bridge realises no ${implementation} paths; nothing to preview`);
    return { connections: [], notes };
  }
  // Only a local target places port slots; a cluster's proxy has the whole range.
  const slots = bridge.target.kind === "local" ? readSlots(bridge.stateDir) : {};
  const target = groupTarget(bridge, slots, g, notes);
  const stack = stackName(g.key);
  const exists = stackExists(bridge, stack);
  // A new group's stack is previewed in a throw-away backend: the bridge's backend gets no
  // stack it did not make itself, and an empty state previews the same anywhere.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-preview-"));
  const envVars = { ...bridge.pulumiEnv };
  if (!exists) envVars.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
  fs.mkdirSync(path.join(work, "state"), { recursive: true });
  // The engine's temporary files (a kubeconfig per Kubernetes provider, which the provider never
  // removes: host/automation/engine-tmp.ts) go with the work directory.
  envVars.TMPDIR = path.join(work, "tmp");
  fs.mkdirSync(envVars.TMPDIR);
  // The passphrase provider's salt lives in the stack's settings file of the bridge's workspace.
  const settings = path.join(bridgeStatePaths(bridge.stateDir).workspace, `Pulumi.${stack}.yaml`);
  if (exists && fs.existsSync(settings)) fs.copyFileSync(settings, path.join(work, `Pulumi.${stack}.yaml`));
  const collector = new StepCollector(progress);
  try {
    progress(`previewing group ${g.key} (stack ${stack}${exists ? "" : ", new"})`);
    if (g.after.length > 0) {
      const ws = await LocalWorkspace.createOrSelectStack(
        { stackName: stack, projectName: PROJECT, program: program(g.key, g.after, target) },
        { workDir: work, envVars, projectSettings: { name: PROJECT, runtime: "nodejs" } },
      );
      await ws.preview({ onEvent: collector.onEvent, diff: true, color: "never" });
    } else if (exists) {
      // No paths left: the bridge destroys the group's stack.
      const ws = await LocalWorkspace.selectStack(
        { stackName: stack, projectName: PROJECT, program: () => Promise.resolve({}) },
        { workDir: work, envVars, projectSettings: { name: PROJECT, runtime: "nodejs" } },
      );
      await ws.preview({ onEvent: collector.onEvent, diff: true, color: "never" });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { ...assemble(g, collector.all(), target, implementation), notes };
}
