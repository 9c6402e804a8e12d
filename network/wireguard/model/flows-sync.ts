/**
 * How a gateway VM (OpenStack) follows the bridge's flows: a VM has no kubelet to mount the
 * flows ConfigMap, so a small Python loop reads it from the control plane's API with a token
 * that may `get` that one ConfigMap and nothing else (flowsReaderRules), writes each key the
 * bridge publishes (`flows-<address>.nft`, `client-<address>.conf`) into FLOWS_DIR, removes
 * the keys that are gone, and reloads the filter when anything changed. The VM then serves the
 * lists and includes the flows exactly as the gateway pod does (cluster-config.ts). Python 3's
 * standard library only: Debian's cloud images have it, and nothing is installed for it.
 */

/** What the VM needs to read the flows ConfigMap (the token is a secret). */
export interface FlowsReaderAccess {
  /** The control plane's API server URL, e.g. https://203.0.113.10:6443. */
  server: string;
  caPem: string;
  token: string;
  namespace: string;
  name: string;
}

/** RBAC of the VM's reader: get one ConfigMap, by name. */
export function flowsReaderRules(
  configMap: string,
): { apiGroups: string[]; resources: string[]; resourceNames: string[]; verbs: string[] }[] {
  return [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [configMap], verbs: ["get"] }];
}

export const FLOWS_SYNC_SCRIPT = `#!/usr/bin/env python3
"""Keeps a directory equal to the bridge's keys of a ConfigMap (klutch WireGuard gateway VM)."""
import argparse, json, os, re, ssl, subprocess, sys, time, urllib.request

KEY = re.compile(r"^(flows-[0-9.]+\\.nft|client-[0-9.]+\\.conf)$")

def fetch(a):
    url = f"{a.server}/api/v1/namespaces/{a.namespace}/configmaps/{a.name}"
    with open(a.token_file) as f:
        token = f.read().strip()
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    ctx = ssl.create_default_context(cafile=a.ca_file)
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return json.load(r).get("data") or {}

def sync(a, data):
    """Writes the bridge's keys (atomically), removes the ones gone; True when anything changed."""
    changed = False
    wanted = {k: v for k, v in data.items() if KEY.match(k)}
    for k, v in wanted.items():
        path = os.path.join(a.dir, k)
        try:
            with open(path) as f:
                if f.read() == v:
                    continue
        except FileNotFoundError:
            pass
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(v)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        changed = True
    for k in os.listdir(a.dir):
        if KEY.match(k) and k not in wanted:
            os.remove(os.path.join(a.dir, k))
            changed = True
    return changed

def main():
    p = argparse.ArgumentParser()
    for flag in ("--server", "--namespace", "--name", "--ca-file", "--token-file", "--dir"):
        p.add_argument(flag, required=True)
    p.add_argument("--reload", required=True, help="command run after a change (the filter's nft -f)")
    p.add_argument("--interval", type=float, default=5)
    p.add_argument("--once", action="store_true")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    last_error = None
    while True:
        try:
            if sync(a, fetch(a)):
                subprocess.run(a.reload, shell=True, check=True)
                print(f"flows: {len([k for k in os.listdir(a.dir) if KEY.match(k)])} files, filter reloaded", flush=True)
            last_error = None
        except Exception as e:  # one bad round never stops the loop; said once per distinct error
            if str(e) != last_error:
                print(f"flows: cannot sync {a.namespace}/{a.name} from {a.server}: {e}", file=sys.stderr, flush=True)
            last_error = str(e)
            if a.once:
                return 1
        if a.once:
            return 0
        time.sleep(a.interval)

if __name__ == "__main__":
    sys.exit(main())
`;
