import * as fs from "node:fs";
import * as path from "node:path";
import { Command } from "commander";
import {
  buildReport,
  exitCode,
  isFailOn,
  mergeInputs,
  FAIL_ON,
  type FailOn,
  type PreviewInput,
} from "../../lib/network-preview/model";
import { renderJson, renderMarkdown } from "../../lib/network-preview/render";
import { withTraffic } from "../../lib/network-preview/cost";
import { reportJsonSchema } from "../../lib/network-preview/schema";
import { renderSvg } from "../../lib/network-preview/svg";
import { repoRoot } from "../../host/automation/toolchain";
import { SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE } from "../../lib/bridge/settings";
import { addTargetOptions, targetFromOptions, type TargetOptions } from "../bridge/target-options";
import type { Target } from "../bridge/program";
import { previewArgsFromBridge } from "../../lib/network-preview/deployed-bridge";

/** Exit codes for errors; 0/3/4/5 are the report's grades (lib/network-preview/model.ts). */
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

// The bridge's own target flags (--target, --port-range, --bind-address, --data-plane-*, …):
// each group is previewed as the bridge with these flags would build it.
const makeProgram = () =>
  addTargetOptions(new Command())
    .name("preview:network")
    .description(
      "Previews the network effect of a change per data-service connection: endpoint before → after, " +
        "risk, exposure, ports, blast radius, policy, cost. Runs the environment stack's preview (--stack) and the " +
        "bridge's own group programs with `pulumi preview` on the bridge's stacks; nothing is changed.",
    )
    .option(
      "--stack <name>",
      "also preview the environment stack's current config (stacks/Pulumi.<name>.yaml) through the engine, with the policy pack",
    )
    .option(
      "--no-policy",
      "run the environment stack's preview without the CrossGuard pack (programs/policy/)",
    )
    .option(
      "--connections <file>",
      "TCPConnection manifests to preview as applied (annotate klutch.anynines.com/preview-action: delete to preview a deletion)",
    )
    .option(
      "--kubeconfig <file>",
      "control plane the NetworkPaths live on (for the current paths and the pending ones)",
    )
    .option("--all-groups", "preview every group on the control plane (e.g. with another --port-range)")
    .option("--no-pending", "leave out NetworkPaths the bridge has not realised yet")
    .option("--bridge-state-dir <dir>", "the bridge's --state-dir", path.join(repoRoot, ".klutch", "bridge"))
    .option("--backend <url>", "the bridge's --backend (default: file backend in its state dir)")
    .option("--slot-size <n>", "the bridge's --slot-size", "50")
    .option("--max-ports-per-group <n>", "the bridge's --max-ports-per-group (default: its whole range)")
    .option(
      "--settings <namespace/name>",
      "the bridge's --settings ConfigMap (target kubernetes: groups are built with its proxy settings, or with those --stack plans)",
      `${SETTINGS_NAMESPACE}/${SETTINGS_CONFIGMAP}`,
    )
    .option(
      "--default-implementation <name>",
      "implementation of claims that name no composition (the XRD's default)",
      "proxy",
    )
    .option(
      "--traffic-gb <n>",
      "GB per month to assume through each changed resource that charges per GB (NAT gateway, peering, load balancer), for a traffic total in the cost estimate",
    )
    .option("--format <format>", "json or markdown", "markdown")
    .option("--out <file>", "write the report here instead of stdout")
    .option("--svg <file>", "also write the change diagram as an SVG file, coloured by risk")
    .option(
      "--fail-on <level>",
      `lowest level that exits non-zero: ${Object.keys(FAIL_ON).join(", ")}`,
      "change",
    )
    .option("--schema", "print the report's JSON Schema and exit")
    .addHelpText(
      "after",
      "\nExit codes: 0 no network change (or below --fail-on), 3 safe changes, 4 endpoint change, interruption or unknown," +
        "\n5 broken connection or widened exposure, 1 the preview failed, 2 usage error.",
    )
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE));

/** Long flag → whether it takes a value, for every option of the preview. */
const optionsOf = (cmd: Command) =>
  new Map(
    cmd.options.filter((opt) => opt.long).map((opt) => [opt.long as string, opt.required || opt.optional]),
  );

type DeployedBridgeModule = typeof import("../network-preview/deployed-bridge");

async function main(): Promise<number> {
  let program = makeProgram();
  program.parse();
  // Where the environment stack deploys the bridge, its flags, state, passphrase and control
  // plane are the defaults: the preview then builds groups as that bridge does. Flags given
  // here still win (they come last).
  const stackName = program.opts<{ stack?: string }>().stack;
  const deployed =
    stackName && !program.opts<{ schema?: boolean }>().schema
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when used, as below
        await (require("../network-preview/deployed-bridge") as DeployedBridgeModule).readDeployedBridge(
          stackName,
        )
      : undefined;
  if (deployed) {
    process.on("exit", deployed.cleanup);
    const derived = [
      ...previewArgsFromBridge(deployed.podArgs, optionsOf(program), {
        ...(deployed.stateHostPath ? { stateDir: deployed.stateHostPath } : {}),
        dataPlaneKubeconfig: deployed.files.dataPlaneKubeconfig,
      }),
      "--kubeconfig",
      deployed.files.controlPlaneKubeconfig,
    ];
    process.stderr.write(
      `preview:network: the bridge of stack "${stackName}" (Deployment ${deployed.deployment}): ${derived.join(" ")}\n`,
    );
    program = makeProgram();
    program.parse([...derived, ...process.argv.slice(2)], { from: "user" });
  }
  const o = program.opts<{
    target: string;
    settings: string;
    stack?: string;
    policy: boolean;
    connections?: string;
    kubeconfig?: string;
    pending: boolean;
    allGroups?: boolean;
    bridgeStateDir: string;
    backend?: string;
    portRange: string;
    slotSize: string;
    maxPortsPerGroup?: string;
    bindAddress: string;
    defaultImplementation: string;
    format: string;
    out?: string;
    svg?: string;
    failOn: string;
    schema?: boolean;
    trafficGb?: string;
  }>();
  const usage = (msg: string) => {
    process.stderr.write(`preview:network: ${msg}\n`);
    return EXIT_USAGE;
  };
  if (o.schema) {
    process.stdout.write(`${JSON.stringify(reportJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (o.format !== "json" && o.format !== "markdown")
    return usage(`--format "${o.format}" is not json or markdown`);
  if (!isFailOn(o.failOn))
    return usage(`--fail-on "${o.failOn}" is not one of ${Object.keys(FAIL_ON).join(", ")}`);
  if (!o.stack && !o.connections && !o.kubeconfig)
    return usage("nothing to preview: give --stack, --connections and/or --kubeconfig");
  let target: Target;
  try {
    target = targetFromOptions(program.opts<TargetOptions>(), path.resolve(o.bridgeStateDir));
  } catch (e) {
    return usage((e as Error).message);
  }
  const range = target.portRange;
  const settingsRef = /^([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253})$/.exec(o.settings);
  if (o.settings !== "" && !settingsRef)
    return usage(`--settings "${o.settings}" must be NAMESPACE/NAME of a ConfigMap, or '' for none`);
  const slotSize = Number(o.slotSize);
  if (!Number.isInteger(slotSize) || slotSize < 3) return usage("--slot-size must be a whole number >= 3");
  const maxPorts = o.maxPortsPerGroup === undefined ? undefined : Number(o.maxPortsPerGroup);
  if (maxPorts !== undefined && (!Number.isInteger(maxPorts) || maxPorts < 3))
    return usage("--max-ports-per-group must be a whole number >= 3");
  const trafficGb = o.trafficGb === undefined ? undefined : Number(o.trafficGb);
  if (trafficGb !== undefined && !(Number.isFinite(trafficGb) && trafficGb >= 0))
    return usage(`--traffic-gb "${o.trafficGb}" must be a number of GB per month, 0 or more`);
  const failOn: FailOn = o.failOn;
  const progress = (line: string) => process.stderr.write(`${line}\n`);

  // Loaded only now: --help and usage errors do not pay for the Pulumi SDK.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { bridgeView } =
    require("../network-preview/bridge-env") as typeof import("../network-preview/bridge-env");
  const { readClaims } =
    require("../network-preview/claims-file") as typeof import("../network-preview/claims-file");
  const { readControlPlane, readLiveSettings } =
    require("../network-preview/control-plane") as typeof import("../network-preview/control-plane");
  const { previewConnections } =
    require("../network-preview/connections") as typeof import("../network-preview/connections");
  const { affectedNamespaces, markUnreachable, previewEnvironment, removedNamespaces } =
    require("../network-preview/environment") as typeof import("../network-preview/environment");
  const { dataPlaneNodes } =
    require("../bridge/data-plane-nodes") as typeof import("../bridge/data-plane-nodes");
  /* eslint-enable @typescript-eslint/no-require-imports */
  try {
    const inputs: PreviewInput[] = [];
    // Source 1 first: its engine run is the long one, and a failure there is reported before any other work.
    const env = o.stack
      ? await previewEnvironment(o.stack, progress, o.policy ? {} : { policyPacks: [] })
      : undefined;
    if (env) inputs.push(env);
    if (o.connections || o.kubeconfig) {
      const claims = o.connections ? readClaims(o.connections, o.defaultImplementation) : [];
      const view = o.kubeconfig
        ? await readControlPlane(o.kubeconfig)
        : { paths: [], claimXr: new Map<string, string>() };
      // The kubernetes target builds groups with the consumer namespaces' proxy settings: those
      // the environment change plans, else those the control plane holds now.
      const live =
        target.kind === "kubernetes" && !env?.plannedSettings && settingsRef && o.kubeconfig
          ? await readLiveSettings(o.kubeconfig, {
              namespace: settingsRef[1] as string,
              name: settingsRef[2] as string,
            })
          : undefined;
      const settings = env?.plannedSettings
        ? { value: env.plannedSettings, from: "planned" as const }
        : live
          ? { value: live, from: "live" as const }
          : undefined;
      // A NodePort proxy reports a node the bridge picks from the nodes on each run: list them
      // as it does (read only), so the preview shows that host rather than "unknown".
      const nodes =
        target.kind === "kubernetes" && !target.nodeHost
          ? await dataPlaneNodes(target.kubeconfig)().catch(() => undefined)
          : undefined;
      const bridge = bridgeView({
        stateDir: path.resolve(o.bridgeStateDir),
        ...(o.backend ? { backend: o.backend } : {}),
        portRange: range,
        slotSize,
        ...(maxPorts !== undefined ? { maxPortsPerGroup: maxPorts } : {}),
        bindAddress: o.bindAddress,
        target,
        ...(settings && target.kind === "kubernetes" ? { settings } : {}),
        ...(nodes ? { nodes } : {}),
        ...(deployed ? { passphrase: deployed.passphrase } : {}),
      });
      const sources = [
        ...(o.connections ? [{ kind: "connections" as const, ref: path.basename(o.connections) }] : []),
        ...(o.kubeconfig ? [{ kind: "control-plane" as const, ref: "NetworkPaths" }] : []),
      ];
      const input = await previewConnections({
        bridge,
        view,
        claims,
        includePending: o.pending && Boolean(o.kubeconfig),
        includeAll: Boolean(o.allGroups && o.kubeconfig),
        // The connections an environment change reaches: previewed with it, through the bridge's programs.
        ...(env && o.kubeconfig
          ? { namespaces: { removed: removedNamespaces(env), affected: affectedNamespaces(env) } }
          : {}),
        sources,
        progress,
      });
      // A routed connection is broken when the planned rules or routes no longer reach its instance.
      inputs.push(env ? { ...input, connections: markUnreachable(input.connections, env.reach) } : input);
    }
    const input = mergeInputs(inputs);
    const built = buildReport(input);
    const report = trafficGb === undefined ? built : { ...built, cost: withTraffic(built.cost, trafficGb) };
    const text = o.format === "json" ? renderJson(report) : renderMarkdown(report);
    if (o.out) fs.writeFileSync(o.out, text);
    else process.stdout.write(text);
    if (o.svg) fs.writeFileSync(o.svg, renderSvg(report));
    progress(report.summary.line);
    return exitCode(report, failOn);
  } catch (e) {
    process.stderr.write(`preview:network: the preview failed: ${(e as Error).message}\n`);
    return EXIT_FAILED;
  }
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    process.stderr.write(`preview:network: ${e.stack ?? e.message}\n`);
    process.exit(EXIT_FAILED);
  },
);
