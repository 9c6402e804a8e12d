import * as path from "node:path";

/**
 * The project's own Crossplane packages on the local registry (host/local-clusters/registry), as
 * `npm run clusters -- up` publishes them and the environment stack installs them. Pure: the
 * caller passes the file reader.
 */

/** Klutch's composition function (programs/composition-function/), its package root and repository. */
export const FUNCTION_PACKAGE = {
  name: "function-klutch",
  packageRoot: "programs/composition-function/package",
  repository: "klutch/function-klutch",
} as const;

/**
 * provider-kubernetes at Klutch's pinned version (host/toolchain/versions.env), built by the toolchain
 * and published under upstream's version.
 */
export const PROVIDER_KUBERNETES_PACKAGE = {
  name: "provider-kubernetes",
  repository: "klutch/provider-kubernetes",
} as const;

/** What `up` pushed, by package name, in the registry's directory. */
export const PACKAGES_FILE = "packages.json";
export const REGISTRY_DIR = ".registry";

export type PublishedPackages = Record<string, { repository: string; tag: string; content?: string }>;

export interface LocalPackages {
  /** `host:port` of the registry as the node reaches it. */
  registry: string;
  /** `127.0.0.1:port`: the registry as this machine reaches it (it listens on loopback), for pushes. */
  pushRegistry: string;
  /** `<registry as the node reaches it>/<repository>:<tag>` by package name. */
  references: Record<string, string>;
  /** PEM of the CA the registry's certificate is from. */
  caBundle: string;
}

/**
 * The packages published for the local stack and their references as seen from a node whose
 * state names `registry` (its link's host end and the registry's port), or why there are none.
 */
export function readLocalPackages(
  stateDir: string,
  registry: string | undefined,
  readFile: (file: string) => string,
): { ok: true; packages: LocalPackages } | { ok: false; problem: string } {
  if (!registry) return { ok: false, problem: "the node was started without the local package registry" };
  const dir = path.join(stateDir, REGISTRY_DIR);
  const file = path.join(dir, PACKAGES_FILE);
  let published: PublishedPackages;
  try {
    published = JSON.parse(readFile(file)) as PublishedPackages;
  } catch {
    return { ok: false, problem: `no packages have been published (${file} is missing or not JSON)` };
  }
  let caBundle: string;
  try {
    caBundle = readFile(path.join(dir, "pki", "ca.crt"));
  } catch {
    return { ok: false, problem: `the registry's CA (${path.join(dir, "pki", "ca.crt")}) is missing` };
  }
  const references = Object.fromEntries(
    Object.entries(published).map(([name, p]) => [name, `${registry}/${p.repository}:${p.tag}`]),
  );
  const pushRegistry = `127.0.0.1:${registry.slice(registry.lastIndexOf(":") + 1)}`;
  return { ok: true, packages: { registry, pushRegistry, references, caBundle } };
}
