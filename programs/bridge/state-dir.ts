import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Where the bridge keeps what it owns under its --state-dir, in one place: the bridge writes
 * it, and the network preview (programs/network-preview/) reads it without starting a bridge.
 */
export const bridgeStatePaths = (stateDir: string) => ({
  /** The file backend of the bridge's stacks, unless --backend names another. */
  backend: `file://${path.join(stateDir, "state")}`,
  /** The passphrase of the bridge's stacks when none is given (mode 0600). */
  passphrase: path.join(stateDir, "passphrase"),
  /** The Automation API's work dir: a stack's settings file (its passphrase salt) lives here. */
  workspace: path.join(stateDir, "workspace"),
  /** Which port block each local group holds (lib/bridge/slots.ts). */
  slots: path.join(stateDir, "slots.json"),
});

/**
 * The backend and passphrase the bridge's stacks use, added to `base`. With `create`, as the
 * bridge runs: the file backend's directory is made, and without a passphrase given a random
 * one is made once and kept next to the state, readable by this user only. Without it, as a
 * preview reads: nothing is created, and where no bridge has made a passphrase yet every group
 * is new (previewed in a throw-away backend), which `throwawayPassphrase` protects.
 */
export function bridgeStackEnv(o: {
  base: NodeJS.ProcessEnv;
  stateDir: string;
  backend?: string;
  create: boolean;
  throwawayPassphrase?: string;
}): NodeJS.ProcessEnv {
  const paths = bridgeStatePaths(o.stateDir);
  const env: NodeJS.ProcessEnv = { ...o.base, PULUMI_BACKEND_URL: o.backend ?? paths.backend };
  const backend = env.PULUMI_BACKEND_URL as string;
  if (o.create && backend.startsWith("file://")) {
    fs.mkdirSync(backend.slice("file://".length), { recursive: true });
  }
  if (!env.PULUMI_CONFIG_PASSPHRASE && !env.PULUMI_CONFIG_PASSPHRASE_FILE) {
    if (o.create && !fs.existsSync(paths.passphrase)) {
      fs.writeFileSync(paths.passphrase, crypto.randomBytes(32).toString("base64"), { mode: 0o600 });
    }
    if (fs.existsSync(paths.passphrase)) env.PULUMI_CONFIG_PASSPHRASE_FILE = paths.passphrase;
    else if (o.throwawayPassphrase) env.PULUMI_CONFIG_PASSPHRASE = o.throwawayPassphrase;
  }
  return env;
}
