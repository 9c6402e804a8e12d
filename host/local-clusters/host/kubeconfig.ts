import * as fs from "node:fs";
import { stringify } from "yaml";

export interface KubeconfigSpec {
  /** Names the cluster and the context; the user is `<name>-<user>`. */
  name: string;
  user: string;
  server: string;
  caCertFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** The name to check the server's certificate against, when the address is not in it. */
  tlsServerName?: string;
}

const b64 = (file: string) => fs.readFileSync(file).toString("base64");

/**
 * A kubeconfig with everything embedded (CA, client cert and key), so it can be copied or
 * pointed at by KUBECONFIG from anywhere without the pki directory next to it.
 */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  const userName = `${spec.name}-${spec.user}`;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: spec.name,
        cluster: {
          server: spec.server,
          "certificate-authority-data": b64(spec.caCertFile),
          ...(spec.tlsServerName ? { "tls-server-name": spec.tlsServerName } : {}),
        },
      },
    ],
    users: [
      {
        name: userName,
        user: {
          "client-certificate-data": b64(spec.clientCertFile),
          "client-key-data": b64(spec.clientKeyFile),
        },
      },
    ],
    contexts: [{ name: spec.name, context: { cluster: spec.name, user: userName } }],
    "current-context": spec.name,
  });
}

/**
 * Writes a file holding a private key with mode 0600, atomically, and only when its content
 * changed (a kubeconfig that stays byte-identical across restarts keeps working for whoever
 * holds it open or watches it).
 */
export function writeSecretFile(file: string, content: string): boolean {
  try {
    if (fs.readFileSync(file, "utf8") === content) {
      fs.chmodSync(file, 0o600);
      return false;
    }
  } catch {
    // missing: write it
  }
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600); // the umask may have narrowed it further; make it exact
  fs.renameSync(tmp, file);
  return true;
}
