import * as path from "node:path";
import { nodeLink } from "./network";

/**
 * What a local cluster's node was started with, as `npm run clusters -- up` keeps it in
 * `<cluster dir>/node/node.json` (host/local-clusters/node/node.ts writes it at each start, so a
 * restart reuses its addresses). The Pulumi program reads it too: the image references in it
 * are the ones the node's containerd imported, the only images its pods can run (nothing can
 * be pulled here). Pure: the caller reads the file.
 */
export interface NodeState {
  slot: number;
  nodeName: string;
  podCidr: string;
  apiServerPort: number;
  /**
   * Image references by name (pause, haproxy, postgres, wireguard, bridge):
   * `klutch.local/<name>:<version>-<12 hex of the manifest digest>`, as imported.
   */
  images: Record<string, string>;
  /**
   * The local package registry as this node and its pods reach it, `<host end>:<port>`
   * (host/local-clusters/registry): absent for a node started without one.
   */
  registry?: string;
}

/** The node state file of the local cluster whose directory is `clusterDir`. */
export function nodeStatePath(clusterDir: string): string {
  return path.join(clusterDir, "node", "node.json");
}

/** The state in a node.json text, or why it is not one. */
export function parseNodeState(
  text: string,
): { ok: true; state: NodeState } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `is not JSON (${(e as Error).message})` };
  }
  const s = raw as Partial<NodeState> | null;
  if (!s || typeof s !== "object" || typeof s.nodeName !== "string")
    return { ok: false, problem: "names no node" };
  if (!s.images || typeof s.images !== "object" || Array.isArray(s.images))
    return { ok: false, problem: "lists no images" };
  return { ok: true, state: s as NodeState };
}

/**
 * The images the node of a local cluster imported, read from its node.json, or why they cannot
 * be: the node was never started (`missing`) or its file is not a node state.
 */
export function readNodeImages(
  clusterDir: string,
  readFile: (file: string) => string,
):
  | {
      ok: true;
      file: string;
      images: Record<string, string>;
      registry?: string;
      /** The node's address, where other local nodes reach its NodePorts. */
      nodeAddress?: string;
    }
  | { ok: false; file: string; missing: boolean; problem: string } {
  const file = nodeStatePath(clusterDir);
  let text: string;
  try {
    text = readFile(file);
  } catch {
    return { ok: false, file, missing: true, problem: `no ${file}` };
  }
  const parsed = parseNodeState(text);
  if (!parsed.ok) return { ok: false, file, missing: false, problem: `${file} ${parsed.problem}` };
  const slot = parsed.state.slot;
  return {
    ok: true,
    file,
    images: parsed.state.images,
    ...(parsed.state.registry ? { registry: parsed.state.registry } : {}),
    ...(Number.isInteger(slot) ? { nodeAddress: nodeLink(slot).nodeAddress } : {}),
  };
}
