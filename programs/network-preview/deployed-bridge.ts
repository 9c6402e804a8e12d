import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { selectStack } from "../stack/program-stack";
import { objectsByCluster, plainValue, type StateResource } from "../../lib/lifecycle/stack-objects";
import { BRIDGE_PATHS } from "../../lib/bridge/deployment";

/** What the preview needs of the bridge an environment stack deployed, read from that stack. */
export interface DeployedBridge {
  /** `<namespace>/<name>` of the Deployment. */
  deployment: string;
  /** The bridge container's arguments, as deployed. */
  podArgs: string[];
  /** The state volume's path on the node (hostPath), when the state is kept there. */
  stateHostPath?: string;
  /** Files written for the preview (mode 0600 in a 0700 directory): remove with `cleanup`. */
  files: { controlPlaneKubeconfig: string; dataPlaneKubeconfig: string };
  /** The passphrase of the bridge's stacks, from the bridge's Secret. */
  passphrase: string;
  cleanup: () => void;
}

type Resource = StateResource & { parent?: string };

const parentType = (r: Resource) => r.parent?.split("::")[2]?.split("$").pop();

/** A Secret's key from the state, whether kept as stringData or base64 data. */
function secretKey(secret: Resource | undefined, key: string): string | undefined {
  const out = secret?.outputs ?? {};
  const stringData = plainValue(out.stringData) as Record<string, unknown> | undefined;
  const fromString = plainValue(stringData?.[key]);
  if (typeof fromString === "string") return fromString;
  const data = plainValue(out.data) as Record<string, unknown> | undefined;
  const encoded = plainValue(data?.[key]);
  return typeof encoded === "string" ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
}

/**
 * The bridge's data-plane kubeconfig as this machine reaches it. The bridge reaches its data
 * plane, the control plane, through the Service `default/kubernetes` (in-cluster address,
 * components/bridge/bridge-data-plane.ts); from here that is the control plane's own address.
 * The identity (the bridge's data-plane token) and the cluster's CA stay.
 */
function seenFromHere(dataPlane: string, controlPlane: string): string {
  const cp = new KubeConfig();
  cp.loadFromString(controlPlane);
  const server = cp.getCurrentCluster()?.server;
  const kc = new KubeConfig();
  kc.loadFromString(dataPlane);
  if (!server) return dataPlane;
  kc.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return kc.exportConfig();
}

/**
 * The bridge Deployment of `stackName`, with its arguments, state location, passphrase and
 * kubeconfigs; undefined when the stack deploys no bridge (its output `bridgeDeployment`).
 */
export async function readDeployedBridge(stackName: string): Promise<DeployedBridge | undefined> {
  const stack = await selectStack({ stack: stackName });
  const name = (await stack.outputs()).bridgeDeployment?.value as string | undefined;
  if (!name) return undefined;
  const resources = ((await stack.exportStack()).deployment as { resources?: Resource[] }).resources ?? [];
  const deployment = resources.find(
    (r) =>
      r.type === "kubernetes:apps/v1:Deployment" &&
      parentType(r) === "klutch:bridge:BridgeDeployment" &&
      (plainValue(r.outputs?.metadata) as { name?: string } | undefined)?.name === name,
  );
  if (!deployment)
    throw new Error(`stack "${stackName}" names bridge Deployment ${name}, but its state holds none`);
  const secret = resources.find(
    (r) => r.type === "kubernetes:core/v1:Secret" && r.parent === deployment.parent,
  );
  const podSpec = (
    plainValue(deployment.outputs?.spec) as {
      template?: {
        spec?: {
          containers?: { name: string; args?: string[] }[];
          volumes?: { name: string; hostPath?: { path: string } }[];
        };
      };
    }
  )?.template?.spec;
  const podArgs = podSpec?.containers?.find((c) => c.name === "bridge")?.args ?? [];
  const stateHostPath = podSpec?.volumes?.find((v) => v.name === "state")?.hostPath?.path;
  const passphrase = secretKey(secret, path.basename(BRIDGE_PATHS.passphrase));
  const dataPlane = secretKey(secret, path.basename(BRIDGE_PATHS.dataPlaneKubeconfig));
  const controlPlane = objectsByCluster(resources).find(
    (c) => c.provider === deployment.provider,
  )?.kubeconfig;
  if (!passphrase || !dataPlane || !controlPlane)
    throw new Error(
      `stack "${stackName}": the bridge's ${[!passphrase && "passphrase", !dataPlane && "data-plane kubeconfig", !controlPlane && "control plane kubeconfig"].filter(Boolean).join(", ")} is not readable from its state; give the bridge's flags and --kubeconfig by hand`,
    );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-preview-bridge-"));
  const write = (file: string, text: string) => {
    fs.writeFileSync(path.join(dir, file), text, { mode: 0o600 });
    return path.join(dir, file);
  };
  return {
    deployment: `${(plainValue(deployment.outputs?.metadata) as { namespace?: string }).namespace}/${name}`,
    podArgs,
    ...(stateHostPath ? { stateHostPath } : {}),
    files: {
      controlPlaneKubeconfig: write("control-plane.kubeconfig", controlPlane),
      dataPlaneKubeconfig: write("data-plane.kubeconfig", seenFromHere(dataPlane, controlPlane)),
    },
    passphrase,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
