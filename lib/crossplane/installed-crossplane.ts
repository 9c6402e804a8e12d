/**
 * `crossplane.useInstalled`: Klutch on a Crossplane core the operator already runs, as Klutch's
 * own install guide has it ("The platform operator team must install Crossplane in the Control
 * Plane Cluster", shared/seeds/003). The environment then installs no chart and only its
 * packages; destroy leaves the core. Pure: the config's half is judged here before anything is
 * read, the control plane's half on the Deployments programs/stack/existing-crossplane.ts reads.
 *
 * What a core must be for Klutch to run on it:
 * - exactly one, in `crossplane-system`: the environment puts provider-kubernetes' identity, its
 *   ProviderConfig Secrets and the bind backend's templates there (components/crossplane/);
 * - not an environment's own (its label): an environment's core goes with that environment's
 *   destroy, and this one's `up` would uninstall its own;
 * - of `crossplane.version`'s minor, which decides the API shapes the environment writes;
 * - with SSA claims on: Klutch installs Crossplane with `--enable-ssa-claims` (anynines'
 *   a9s-cli-v2 `DeployCrossplaneHelmChart`). The flag is off by default in 1.17 and 1.18 and on
 *   from 1.19 (`EnableSSAClaims`, `default:"true"`, cmd/crossplane/core/core.go of 1.19.0,
 *   1.20.11 and 2.4.0), so only `--enable-ssa-claims=false` turns it off there.
 */
import type { ConfigPath } from "../config/located";
import type { ConfigIssue } from "../config/messages";
import { CROSSPLANE_VERSION_PATTERN, imageCrossplaneVersion } from "../config/crossplane-versions";
import type { ControlPlaneConfig, CrossplaneConfig } from "../config/schema";
import { ENVIRONMENT_LABEL } from "../environment-plan";
import { coreContainer, type DeploymentLike } from "./foreign-crossplane";
import { ENVIRONMENT_ASKER, type InstalledCrossplaneAsker, type PackageOwner } from "./installed-askers";

export {
  COMPONENT_OWNER_LABEL,
  componentAsker,
  componentPackageOwner,
  INSTALLED_CROSSPLANE_NAMESPACE,
} from "./installed-askers";

/** What the config alone says against `useInstalled` (each with its setting), before any read. */
export function useInstalledConfigProblems(
  cp: ControlPlaneConfig,
  xp: CrossplaneConfig,
): { at: ConfigPath; message: string }[] {
  if (!xp.useInstalled) return [];
  const problems: { at: ConfigPath; message: string }[] = [];
  if (cp.infrastructure !== "existing")
    problems.push({
      at: ["crossplane", "useInstalled"],
      message: `is true, but the control plane "${cp.name}" is made by this environment (infrastructure "${cp.infrastructure}"), so no Crossplane runs on it before \`up\`: leave crossplane.useInstalled out, or hand over your control plane with infrastructure "existing" and its kubeconfig`,
    });
  if (xp.runLocally)
    problems.push({
      at: ["crossplane", "runLocally"],
      message: `is true, but crossplane.useInstalled uses the core already running on the control plane: leave one of them out`,
    });
  for (const key of ["image", "chartPath"] as const)
    if (xp[key] !== undefined)
      problems.push({
        at: ["crossplane", key],
        message: `is ${xp[key]}, but with crossplane.useInstalled this environment installs no Crossplane chart: remove crossplane.${key}`,
      });
  return problems;
}

export interface InstalledCrossplaneInput {
  /** The environment that asks; none for the provider's Crossplane component. */
  environment?: string;
  controlPlane: string;
  /** `crossplane.version`, and whether it was left out (the default). */
  version: string;
  versionIsDefault: boolean;
  /**
   * Who asks: an environment (the stack's `klutch:crossplane.*` settings, the default), or the
   * provider's Crossplane component (its own inputs, and the namespace it puts its identity in).
   */
  asker?: InstalledCrossplaneAsker;
}

/** Why the Crossplane cores on the control plane cannot be used, or nothing when exactly one can. */
export function installedCrossplaneIssues(
  cores: readonly DeploymentLike[],
  o: InstalledCrossplaneInput,
): ConfigIssue[] {
  const asker = o.asker ?? ENVIRONMENT_ASKER;
  const issue = (message: string, path = asker.path("useInstalled")): ConfigIssue[] => [{ path, message }];
  const useInstalled = asker.setting("useInstalled");
  const prefix = `is true, but the control plane ${o.controlPlane}`;
  const where = (d: DeploymentLike) => `${d.metadata?.namespace ?? "?"}/${d.metadata?.name ?? "?"}`;
  if (cores.length === 0)
    return issue(
      `${prefix} runs no Crossplane core (no Deployment labelled app=crossplane in any namespace): install Crossplane ${o.version} with its chart into ${asker.namespace}, or leave ${useInstalled} out so that ${asker.installer} installs its own`,
    );
  if (cores.length > 1)
    return issue(
      `${prefix} runs ${cores.length} Crossplane cores (${cores.map(where).join(", ")}), and Klutch's packages can go to one only: remove all but one`,
    );
  const core = cores[0]!;
  const owner = core.metadata?.labels?.[ENVIRONMENT_LABEL];
  if (owner !== undefined && owner === o.environment)
    return issue(
      `${prefix} runs this environment's own Crossplane (Deployment ${where(core)}, installed by an earlier \`up\`), which useInstalled would uninstall: leave ${useInstalled} out`,
    );
  if (owner !== undefined)
    return issue(
      `${prefix} runs the Crossplane of environment ${owner} (Deployment ${where(core)}), which goes when that environment is destroyed: use a control plane whose Crossplane no environment installed`,
    );
  if (core.metadata?.namespace !== asker.namespace)
    return issue(
      `${prefix} runs Crossplane in namespace ${core.metadata?.namespace ?? "?"} (Deployment ${where(core)}), but ${asker.namespaceReason} in ${asker.namespace}: install Crossplane there`,
    );
  const container = coreContainer(core);
  const found = container?.image ? imageCrossplaneVersion(container.image) : undefined;
  if (!found)
    return issue(
      `${prefix} runs Crossplane from image ${container?.image ?? "none"} (Deployment ${where(core)}), whose tag names no version: run a release's image, tagged v<version>`,
    );
  if (!CROSSPLANE_VERSION_PATTERN.test(found))
    return issue(
      `${prefix} runs Crossplane ${found} (Deployment ${where(core)}), which this project does not run Klutch on (2.0.x to 2.4.x, or 1.17.x to 1.20.x): move it into that range one minor at a time`,
    );
  if (minor(found) !== minor(o.version))
    return issue(
      `is ${o.version}${o.versionIsDefault ? " (the default)" : ""}, but the control plane ${o.controlPlane} runs Crossplane ${found} (Deployment ${where(core)}), and the version decides the API shapes Klutch writes: set ${asker.setting("version")} to ${found}`,
      asker.path("version"),
    );
  if (!ssaClaimsOn(found, container?.args ?? []))
    return issue(
      `${prefix} runs Crossplane ${found} with SSA claims off (Deployment ${where(core)}, ${ssaClaimsArg(container?.args ?? []) ?? "the default before 1.19"}), and Klutch syncs claims with server-side apply: run core with --enable-ssa-claims (the chart's args)`,
    );
  return [];
}

function minor(version: string): string {
  return version.split(".").slice(0, 2).join(".");
}

/** The last `--enable-ssa-claims[=v]` among the args: each one sets the flag again, so the last counts. */
function ssaClaimsArg(args: readonly string[]): string | undefined {
  return args.filter((a) => /^--enable-ssa-claims(=.*)?$/.test(a)).at(-1);
}

/** Whether core runs with SSA claims, from its args and its version's default. */
export function ssaClaimsOn(version: string, args: readonly string[]): boolean {
  const arg = ssaClaimsArg(args);
  if (arg === undefined) return !/^1\.1[78]\./.test(version);
  const value = arg.split("=")[1];
  // Go's strconv.ParseBool, which Kong's bool mapper uses.
  return value === undefined || ["1", "t", "T", "TRUE", "true", "True"].includes(value);
}

/** A package object found on the control plane: its kind, name and labels. */
export interface FoundPackage {
  kind: string;
  name: string;
  labels?: Record<string, string>;
}

/**
 * The packages this environment would make that exist already and are not its own: refused, not
 * taken over (the operator's provider-kubernetes, say, with its own version and runtime config).
 */
export function foreignPackageIssues(
  found: readonly FoundPackage[],
  planned: readonly { kind: string; name: string }[],
  o: { environment: string; controlPlane: string } | PackageOwner,
): ConfigIssue[] {
  const owner: PackageOwner =
    "label" in o
      ? o
      : {
          controlPlane: o.controlPlane,
          label: ENVIRONMENT_LABEL,
          value: o.environment,
          who: `environment ${o.environment}`,
          installer: "this environment",
          path: ENVIRONMENT_ASKER.path("useInstalled"),
          comesWith: "the environment",
        };
  const wanted = new Set(planned.map((p) => `${p.kind}/${p.name}`));
  return found
    .filter((f) => wanted.has(`${f.kind}/${f.name}`) && f.labels?.[owner.label] !== owner.value)
    .map((f) => ({
      path: owner.path,
      message: `the control plane ${owner.controlPlane} already has ${f.kind} ${f.name}, which ${owner.who} did not make, and ${owner.installer} would install its own of that name: remove it (Klutch's packages come with ${owner.comesWith}), or use a control plane without it`,
    }));
}
