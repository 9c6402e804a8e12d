/**
 * The network preview's flags, read from the bridge the environment stack deployed, so that
 * `npm run preview:network -- --stack <name>` builds each group as that bridge does, with no
 * flags copied by hand (issue: the operator had to copy six flags from the Deployment).
 *
 * The pod's arguments are the bridge's own flags (lib/bridge/deployment.ts bridgeArgs). Those
 * the preview shares (programs/bridge/target-options.ts, and --backend, --slot-size,
 * --max-ports-per-group, --settings) carry over as they are; paths inside the pod are replaced
 * by where the same files are on this machine; flags only the running bridge has (leader
 * election, ops server, in-cluster config) are left out.
 */

/** Where the pod's files are here. */
export interface HostPaths {
  /** The state volume's hostPath (the pod's --state-dir), when the state is on the node. */
  stateDir?: string;
  /** The data plane's kubeconfig, written from the bridge's Secret. */
  dataPlaneKubeconfig?: string;
}

/**
 * The preview's arguments for a bridge started with `podArgs`. `previewOptions` maps each long
 * flag the preview knows to whether it takes a value.
 */
export function previewArgsFromBridge(
  podArgs: readonly string[],
  previewOptions: ReadonlyMap<string, boolean>,
  host: HostPaths,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < podArgs.length; i++) {
    const arg = podArgs[i] as string;
    if (!arg.startsWith("--")) continue;
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    // A flag takes the next token as its value unless given inline or followed by another flag.
    const next = podArgs[i + 1];
    const value = inline ?? (next !== undefined && !next.startsWith("--") ? next : undefined);
    if (inline === undefined && value !== undefined) i++;
    if (flag === "--state-dir") {
      if (host.stateDir) out.push("--bridge-state-dir", host.stateDir);
      continue;
    }
    if (flag === "--data-plane-kubeconfig") {
      if (host.dataPlaneKubeconfig) out.push(flag, host.dataPlaneKubeconfig);
      continue;
    }
    const takesValue = previewOptions.get(flag);
    if (takesValue === undefined) continue;
    if (takesValue && value !== undefined) out.push(flag, value);
    else if (!takesValue) {
      out.push(flag);
      // A boolean flag consumed no value: give the token back.
      if (inline === undefined && value !== undefined) i--;
    }
  }
  return out;
}
