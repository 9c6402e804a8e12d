import * as path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

/**
 * A kubeconfig with every file it references inlined, as `kubectl config view --flatten` does:
 * `certificate-authority`, `client-certificate` and `client-key` paths (relative ones from the
 * kubeconfig's own folder) become their `-data` forms. Everything downstream (the Kubernetes
 * provider, the CA handed to konnectors, the backend's ca.crt) then sees the CA, which a text
 * reading of `certificate-authority: /path` lost. A kubeconfig that references no file is
 * returned as it is, so existing stacks see no change in their providers' inputs.
 *
 * Parsing and path handling are the client library's `KubeConfig`; `readFile` is injected so
 * this stays pure (the caller reads files).
 */
export function flattenKubeconfig(text: string, file: string, readFile: (f: string) => Buffer): string {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  kc.makePathsAbsolute(path.dirname(path.resolve(file)));
  const refersToFiles = kc.clusters.some((c) => c.caFile) || kc.users.some((u) => u.certFile || u.keyFile);
  if (!refersToFiles) return text;
  const inline = (f: string | undefined) => (f ? readFile(f).toString("base64") : undefined);
  const flat = new KubeConfig();
  flat.loadFromOptions({
    clusters: kc.clusters.map(({ caFile, ...c }) => ({
      ...c,
      ...(caFile ? { caData: inline(caFile) } : {}),
    })),
    users: kc.users.map(({ certFile, keyFile, ...u }) => ({
      ...u,
      ...(certFile ? { certData: inline(certFile) } : {}),
      ...(keyFile ? { keyData: inline(keyFile) } : {}),
    })),
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return flat.exportConfig();
}
