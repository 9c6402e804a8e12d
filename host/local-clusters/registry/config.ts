import { stringify } from "yaml";

/**
 * The local package registry's configuration files, rendered from its settings. Pure, so
 * the tests read what the processes get.
 */

export interface RegistrySettings {
  /** Loopback port it listens on (nodes reach it through their link's DNAT, host.ts). */
  port: number;
  dataDir: string;
  certFile: string;
  keyFile: string;
}

/**
 * distribution 2.8's config (Debian's `docker-registry`): TLS on loopback only, blobs on disk,
 * deletes allowed (a re-pushed tag's old manifest can be removed). No auth: nothing but this
 * machine and its nodes can reach the port. Reference: docs/configuration.md of
 * distribution v2.8.2 (`http.addr`, `http.tls.certificate`/`key`, `storage.filesystem`).
 */
export function registryConfig(s: RegistrySettings): string {
  return stringify({
    version: 0.1,
    log: { level: "warn", fields: { service: "registry" } },
    storage: {
      filesystem: { rootdirectory: s.dataDir },
      delete: { enabled: true },
    },
    http: {
      addr: `127.0.0.1:${s.port}`,
      tls: { certificate: s.certFile, key: s.keyFile },
      headers: { "X-Content-Type-Options": ["nosniff"] },
    },
  });
}

/**
 * containerd's registry host configuration for one registry (`<config_path>/<host:port>/
 * hosts.toml`, containerd 1.6 docs/hosts.md): pull and resolve from it over TLS verified with
 * this CA. The node's containerd runs in the node's network namespace, so it dials the
 * registry at the node link's host end like the node's pods do.
 */
export function containerdHostsToml(registry: string, caFile: string): string {
  const q = (s: string) => JSON.stringify(s);
  return `# Rendered by host/local-clusters/registry/config.ts.
server = ${q(`https://${registry}`)}

[host.${q(`https://${registry}`)}]
  capabilities = ["pull", "resolve"]
  ca = ${q(caFile)}
`;
}
