import type { NetworkPathObject } from "../../lib/bridge/api";

/** What a test overrides of a path; each part is merged over the defaults of `networkPath`. */
export interface NetworkPathParts {
  metadata?: Partial<NetworkPathObject["metadata"]>;
  spec?: Partial<NetworkPathObject["spec"]>;
  /** Taken as given; without it the path has no `status` key at all (never `status: undefined`). */
  status?: NetworkPathObject["status"];
}

/**
 * A NetworkPath object (lib/bridge/api.ts) for unit tests, named `name`. Defaults:
 * - metadata: `{ name, generation: 1 }`, nothing else (no uid, finalizers, deletionTimestamp);
 * - spec: `{ implementation: "proxy", connection: "xr-<name>", consumerNamespace: "team-a",
 *   instanceHost: "10.0.0.1", port: 5432 }`;
 * - no status.
 * Overrides are spread over the defaults, so the keys keep the order above and extra
 * metadata keys follow `generation`.
 */
export function networkPath(name: string, parts: NetworkPathParts = {}): NetworkPathObject {
  return {
    metadata: { name, generation: 1, ...parts.metadata },
    spec: {
      implementation: "proxy",
      connection: `xr-${name}`,
      consumerNamespace: "team-a",
      instanceHost: "10.0.0.1",
      port: 5432,
      ...parts.spec,
    },
    ...(parts.status !== undefined ? { status: parts.status } : {}),
  };
}
