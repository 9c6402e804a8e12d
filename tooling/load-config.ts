import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { repoRoot } from "./toolchain";
import * as path from "node:path";
import { formatPath, renderIssues } from "../lib/config/messages";
import { planBridge, type BridgePlan } from "../lib/bridge/environment-plan";
import { planCrossplane, type CrossplanePlan } from "../lib/crossplane/environment-plan";
import { EnvironmentConfig } from "../lib/config/schema";
import type { AnyninesCredentials } from "../components/crossplane/crossplane";
import { validateEnvironment } from "../lib/config/validate";

export interface LoadedEnvironment {
  config: EnvironmentConfig;
  /** Secret settings, wrapped as Pulumi secrets so they never reach state or logs in plain text. */
  secrets: {
    oidcClientSecret?: pulumi.Output<string>;
    bindCookieSigningKey?: pulumi.Output<string>;
    bindCookieEncryptionKey?: pulumi.Output<string>;
    bindTlsCertificate?: pulumi.Output<string>;
    bindTlsKey?: pulumi.Output<string>;
    anyninesCredentials?: pulumi.Output<Record<string, AnyninesCredentials>>;
    bridgePassphrase?: pulumi.Output<string>;
  };
  /** The bridge Deployment the stack deploys (lib/bridge/environment-plan.ts), if any. */
  bridge?: BridgePlan;
  /** How Crossplane core runs (lib/crossplane/environment-plan.ts). */
  crossplane: CrossplanePlan;
  projectDir: string;
}

/** Turns config values back into data: structured settings arrive as JSON text. */
function decode(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * Validates a stack's `klutch:` settings as `key → value` text (the engine's config, or the
 * Automation API's `getAllConfig()`): what the program checks first, and what `npm run pulumi`
 * checks before it starts the engine at all.
 */
export function validateStackConfig(
  values: Record<string, string>,
  projectDir: string = repoRoot,
): { raw: Record<string, unknown>; result: ReturnType<typeof validateEnvironment> } {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key.startsWith("klutch:")) raw[key.slice("klutch:".length)] = decode(value);
  }
  // KLUTCH_LOCAL_DIR moves the local clusters (tests use a temporary directory); the local
  // clusters command honours the same variable, so both sides agree on the kubeconfigs.
  const localDir = process.env.KLUTCH_LOCAL_DIR;
  if (localDir) raw.localClusters = { ...(raw.localClusters as object | undefined), stateDir: localDir };
  const result = validateEnvironment(raw, {
    projectDir,
    readFile: (file) => fs.readFileSync(file, "utf8"),
  });
  return { raw, result };
}

/**
 * Reads and validates every `klutch:` setting of the current stack. On any problem it
 * throws one RunError listing them all (Pulumi prints it without a stack trace), before
 * the program registers a single resource.
 */
export function loadEnvironment(projectDir: string = repoRoot): LoadedEnvironment {
  const { raw, result } = validateStackConfig(pulumi.runtime.allConfig(), projectDir);
  if (!result.ok) throw new pulumi.RunError(renderIssues(result.issues, pulumi.getStack()));
  const bridge = bridgePlanOf(result.config, projectDir);
  const crossplane = crossplanePlanOf(result.config, projectDir);
  const creds = raw.anyninesCredentials;
  const text = (key: string) => {
    const value = raw[key];
    return typeof value === "string" && value ? { [key]: pulumi.secret(value) } : {};
  };
  return {
    config: result.config,
    secrets: {
      ...text("oidcClientSecret"),
      ...text("bindCookieSigningKey"),
      ...text("bindCookieEncryptionKey"),
      ...text("bindTlsCertificate"),
      ...text("bindTlsKey"),
      ...text("bridgePassphrase"),
      ...(creds && typeof creds === "object"
        ? { anyninesCredentials: pulumi.secret(creds as Record<string, AnyninesCredentials>) }
        : {}),
    },
    ...(bridge ? { bridge } : {}),
    crossplane,
    projectDir,
  };
}

/** The bridge plan of a validated config (validation reported every problem of it already). */
export function bridgePlanOf(config: EnvironmentConfig, projectDir: string): BridgePlan | undefined {
  const problems: string[] = [];
  const plan = planBridge(
    {
      controlPlane: { value: config.controlPlane, at: ["controlPlane"] },
      appClusters: config.appClusters.map((value, i) => ({ value, at: ["appClusters", i] })),
      bridge: config.bridge,
      localStateDir: path.resolve(projectDir, config.localClusters.stateDir),
      readFile: (file) => fs.readFileSync(file, "utf8"),
    },
    (at, message) => problems.push(`${formatPath(at)}: ${message}`),
  );
  // Only if a file changed between validation and here (a node restarted meanwhile).
  if (problems.length > 0) throw new pulumi.RunError(problems.join("\n"));
  return plan;
}

/** The Crossplane plan of a validated config (validation reported every problem of it already). */
export function crossplanePlanOf(config: EnvironmentConfig, projectDir: string): CrossplanePlan {
  const problems: string[] = [];
  const plan = planCrossplane(
    {
      controlPlane: { value: config.controlPlane, at: ["controlPlane"] },
      crossplane: config.crossplane,
      localStateDir: path.resolve(projectDir, config.localClusters.stateDir),
      readFile: (file) => fs.readFileSync(file, "utf8"),
    },
    (at, message) => problems.push(`${formatPath(at)}: ${message}`),
  );
  // Only if a file changed between validation and here (a node restarted meanwhile).
  if (!plan || problems.length > 0) throw new pulumi.RunError(problems.join("\n"));
  return plan;
}
