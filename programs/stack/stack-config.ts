import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { repoRoot } from "../../host/automation/toolchain";
import * as path from "node:path";
import { formatPath, renderIssues } from "../../lib/config/messages";
import { planBridge, type BridgePlan } from "../../lib/bridge/bridge-plan";
import { planCrossplane, type CrossplanePlan } from "../../lib/crossplane/crossplane-plan";
import { planInstanceNames, type InstanceNamesServer } from "../../lib/instance-names/plan";
import type { ControlPlaneConfig } from "../../lib/config/schema";
import type { EnvironmentConfig } from "../../components/config/schema";
import type { Located } from "../../lib/config/located";
import type { EnvironmentSecrets } from "../../components/environment";
import type { AnyninesCredentials } from "../../lib/crossplane/credentials";
import { validateEnvironment } from "../../components/config/validate";

export interface LoadedEnvironment {
  config: EnvironmentConfig;
  secrets: EnvironmentSecrets;
  /** The bridge Deployment the stack deploys (lib/bridge/bridge-plan.ts), if any. */
  bridge?: BridgePlan;
  /** How Crossplane core runs (lib/crossplane/crossplane-plan.ts). */
  crossplane: CrossplanePlan;
  /** Each app cluster's names server (lib/instance-names/plan.ts); none without instanceNames.zones. */
  instanceNames: InstanceNamesServer[];
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
  readFile: (file: string) => string = readOnce(),
): { raw: Record<string, unknown>; result: ReturnType<typeof validateEnvironment> } {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key.startsWith("klutch:")) raw[key.slice("klutch:".length)] = decode(value);
  }
  // KLUTCH_LOCAL_DIR moves the local clusters (tests use a temporary directory); the local
  // clusters command honours the same variable, so both sides agree on the kubeconfigs.
  const localDir = process.env.KLUTCH_LOCAL_DIR;
  if (localDir) raw.localClusters = { ...(raw.localClusters as object | undefined), stateDir: localDir };
  const result = validateEnvironment(raw, { projectDir, readFile });
  return { raw, result };
}

/**
 * Reads and validates every `klutch:` setting of the current stack. On any problem it
 * throws one RunError listing them all (Pulumi prints it without a stack trace), before
 * the program registers a single resource.
 */
export function loadEnvironment(projectDir: string = repoRoot): LoadedEnvironment {
  const readFile = readOnce();
  const { raw, result } = validateStackConfig(pulumi.runtime.allConfig(), projectDir, readFile);
  if (!result.ok) throw new pulumi.RunError(renderIssues(result.issues, pulumi.getStack()));
  const bridge = bridgePlanOf(result.config, projectDir, readFile);
  const crossplane = crossplanePlanOf(result.config, projectDir, readFile);
  const instanceNames = instanceNamesPlanOf(result.config, projectDir, readFile);
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
      ...text("bridgeStateCredentials"),
      ...(creds && typeof creds === "object"
        ? { anyninesCredentials: pulumi.secret(creds as Record<string, AnyninesCredentials>) }
        : {}),
    },
    ...(bridge ? { bridge } : {}),
    crossplane,
    instanceNames,
    projectDir,
  };
}

/**
 * Reads each file once per run: validation and both planners look at the control plane's
 * node.json, and they must see the same text (a node restarting between two reads would
 * otherwise give validation and the program two different images).
 */
export function readOnce(): (file: string) => string {
  const seen = new Map<string, string>();
  return (file) => {
    const known = seen.get(file);
    if (known !== undefined) return known;
    const text = fs.readFileSync(file, "utf8");
    seen.set(file, text);
    return text;
  };
}

/** What every planner of a validated config is given, and its problems as one RunError. */
function planOf<T>(
  config: EnvironmentConfig,
  projectDir: string,
  readFile: (file: string) => string,
  plan: (
    context: {
      controlPlane: Located<ControlPlaneConfig>;
      localStateDir: string;
      readFile: (file: string) => string;
    },
    add: (at: (string | number)[], message: string) => void,
  ) => T | undefined,
): T | undefined {
  const problems: string[] = [];
  const planned = plan(
    {
      controlPlane: { value: config.controlPlane, at: ["controlPlane"] },
      localStateDir: path.resolve(projectDir, config.localClusters.stateDir),
      readFile,
    },
    (at, message) => problems.push(`${formatPath(at)}: ${message}`),
  );
  // Validation reported every problem already; these come only from a reader other than its own.
  if (problems.length > 0) throw new pulumi.RunError(problems.join("\n"));
  return planned;
}

/** The bridge plan of a validated config. */
export function bridgePlanOf(
  config: EnvironmentConfig,
  projectDir: string,
  readFile: (file: string) => string = readOnce(),
): BridgePlan | undefined {
  return planOf(config, projectDir, readFile, (context, add) =>
    planBridge(
      {
        ...context,
        appClusters: config.appClusters.map((value, i) => ({ value, at: ["appClusters", i] })),
        bridge: config.bridge,
      },
      add,
    ),
  );
}

/** Each app cluster's names server, of a validated config (none without instanceNames.zones). */
export function instanceNamesPlanOf(
  config: EnvironmentConfig,
  projectDir: string,
  readFile: (file: string) => string = readOnce(),
): InstanceNamesServer[] {
  return (
    planOf(config, projectDir, readFile, (context, add) =>
      planInstanceNames(
        {
          appClusters: config.appClusters.map((value, i) => ({ value, at: ["appClusters", i] })),
          names: config.instanceNames,
          ...(config.bridge.image ? { bridgeImage: config.bridge.image } : {}),
          localStateDir: context.localStateDir,
          readFile: context.readFile,
        },
        add,
      ),
    ) ?? []
  );
}

/** The Crossplane plan of a validated config. */
export function crossplanePlanOf(
  config: EnvironmentConfig,
  projectDir: string,
  readFile: (file: string) => string = readOnce(),
): CrossplanePlan {
  const plan = planOf(config, projectDir, readFile, (context, add) =>
    planCrossplane({ ...context, crossplane: config.crossplane }, add),
  );
  if (!plan) throw new pulumi.RunError("crossplane: no plan for how Crossplane core runs");
  return plan;
}
