import * as path from "node:path";
import { pathId, type NetworkPathObject } from "../../../lib/bridge/model";
import type { ProxyConnection } from "./types";

/** A path as the proxy reads it; the bridge and the network preview admit and count listeners from it. */
export function toConnection(p: NetworkPathObject): ProxyConnection {
  return {
    id: pathId(p),
    instanceHost: p.spec.instanceHost,
    port: p.spec.port,
    ...(p.spec.enhancements ? { enhancements: p.spec.enhancements } : {}),
  };
}

/** The directory of a group's HAProxy process on the local target (its haproxy.cfg and pid file). */
export function localProxyDir(stateDir: string, group: string): string {
  return path.join(stateDir, "proxies", group.replace(/[^a-zA-Z0-9-]/g, "_"));
}
