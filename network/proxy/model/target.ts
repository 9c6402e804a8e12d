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
