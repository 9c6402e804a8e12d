import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import type { ValidationContext } from "../../components/config/validate";
import { nodeStatePath } from "../../lib/local/node-state";
import { FUNCTION_PACKAGE, PACKAGES_FILE, REGISTRY_DIR } from "../../lib/local/packages";

/** A syntactically valid kubeconfig for a cluster that does not need to exist. */
export function fakeKubeconfig(name: string, server = "https://127.0.0.1:6443"): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server, "certificate-authority-data": "Zm9v" } }],
    users: [{ name: `${name}-admin`, user: { token: "not-a-real-token" } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin` } }],
    "current-context": name,
  });
}

/** A kubeconfig for a plain-HTTP fake API server on this machine's loopback (unit tests' servers). */
export function loopbackKubeconfig(port: number): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "c", cluster: { server: `http://127.0.0.1:${port}`, "insecure-skip-tls-verify": true } },
    ],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
    "current-context": "c",
  });
}

/** The fake state dirs of this process, removed when it exits (tests hold them until then). */
const fakeStateDirs = new Set<string>();
process.on("exit", () => {
  for (const dir of fakeStateDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A temporary local-clusters state dir holding kubeconfigs for the given cluster names; removed
 * when the test process exits.
 */
export function fakeLocalStateDir(names: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-local-"));
  fakeStateDirs.add(dir);
  for (const name of names) {
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, "kubeconfig"), fakeKubeconfig(name));
  }
  return dir;
}

/** Where a fake node reaches the local registry (its link's host end for slot 1). */
export const FAKE_REGISTRY = "172.30.0.5:5000";
export const FAKE_FUNCTION_TAG = "v0.1.0-g0123456789ab";

/**
 * A started node's state (node.json) for a cluster of such a state dir, with these image
 * references, and the packages `up` publishes to the local registry beside it.
 */
export function fakeNodeState(stateDir: string, cluster: string, images: Record<string, string>): void {
  const file = nodeStatePath(path.join(stateDir, cluster));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    JSON.stringify({
      slot: 1,
      nodeName: `${cluster}-node`,
      podCidr: "10.244.0.0/24",
      apiServerPort: 1,
      images,
      registry: FAKE_REGISTRY,
    }),
  );
  for (const [file, text] of Object.entries(fakePublishedPackages(stateDir))) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

/** The files `npm run clusters -- up` leaves in a state dir's registry directory (host/local-clusters/packages). */
export function fakePublishedPackages(stateDir: string): Record<string, string> {
  const registryDir = path.join(stateDir, REGISTRY_DIR);
  return {
    [path.join(registryDir, PACKAGES_FILE)]: JSON.stringify({
      [FUNCTION_PACKAGE.name]: { repository: FUNCTION_PACKAGE.repository, tag: FAKE_FUNCTION_TAG },
    }),
    [path.join(registryDir, "pki", "ca.crt")]: "-----BEGIN CERTIFICATE-----\nfake\n",
  };
}

/** A validation context whose files are these (under projectDir /project); any other "does not exist". */
export function fakeValidationContext(files: Record<string, string>): ValidationContext {
  return {
    projectDir: "/project",
    readFile: (file) => {
      const text = files[file];
      if (text === undefined) throw new Error(`ENOENT: ${file}`);
      return text;
    },
  };
}
