import * as fs from "node:fs";
import * as path from "node:path";
import { EKS_DEFAULT_KUBERNETES_VERSION, KUBERNETES_END_OF_LIFE } from "../../lib/config/kubernetes-versions";

/**
 * Every part the project pins, where its pin lives, and how long upstream supports it, as read
 * from each upstream's own policy on 2026-12-02 (the sources are in docs/versions.md). The pins
 * themselves are read from host/toolchain/versions.env and package.json, so this table cannot
 * drift from them; `npm run versions` prints it with each part's standing on the day it runs.
 */
export type Pin = { env: string } | { npm: string } | { fixed: string };

export interface SupportWindow {
  part: string;
  pin: Pin;
  /** Upstream's rule, in a few words. */
  policy: string;
  /** The day support of the pinned line ends, when upstream names one. */
  ends?: string;
  /** When no date is known: what ends it. */
  endsWhen?: string;
  /** Already over on the day this table was written, and why. */
  ended?: string;
  /** Where to change it. */
  move: string;
  /**
   * The pin these support facts were read for. A pin moved without its row refreshed is
   * reported as unchecked, and the unit test refuses it, so the table never vouches for a
   * release nobody looked up.
   */
  checkedFor: string;
}

const ROOT = path.resolve(__dirname, "..", "..");

export const SUPPORT_WINDOWS: readonly SupportWindow[] = [
  {
    part: "Kubernetes (local clusters)",
    pin: { env: "KUBERNETES_VERSION" },
    checkedFor: "1.37.2",
    policy: "the three newest minors, about 14 months each",
    ends: KUBERNETES_END_OF_LIFE["1.37"],
    move: "`KUBERNETES_VERSION`; a cluster's data moves one minor at a time",
  },
  {
    part: "Kubernetes (EKS default)",
    pin: { fixed: EKS_DEFAULT_KUBERNETES_VERSION },
    checkedFor: "1.35",
    policy: "EKS standard support: 14 months from EKS's release",
    ends: "2027-03-27",
    move: "`EKS_DEFAULT_KUBERNETES_VERSION` (lib/config/kubernetes-versions.ts), or `kubernetesVersion`",
  },
  {
    part: "etcd",
    pin: { env: "ETCD_VERSION" },
    checkedFor: "3.7.3",
    policy: "the current and the previous minor",
    endsWhen: "etcd 3.9.0 ships",
    move: "`ETCD_VERSION`; one minor at a time, like Kubernetes",
  },
  {
    part: "Node.js",
    pin: { env: "NODE_VERSION" },
    checkedFor: "26.12.1",
    policy: "even lines: 30 months of LTS (maintenance from 2027-10-20)",
    ends: "2029-04-30",
    move: "`NODE_VERSION` and `@types/node`",
  },
  {
    part: "Crossplane",
    pin: { env: "CROSSPLANE_VERSION" },
    checkedFor: "2.4.0",
    policy: "the three newest minors",
    ends: "2027-05-31",
    move: "`CROSSPLANE_VERSION`; a live control plane one minor at a time",
  },
  {
    part: "Crossplane 1.20 (process core, upstream Klutch's line)",
    pin: { env: "CROSSPLANE_LEGACY_VERSION" },
    checkedFor: "1.20.11",
    policy: "the three newest minors",
    ended: "1.20 ended when v2.5 shipped (November 2026)",
    move: "`CROSSPLANE_LEGACY_VERSION`; goes once a process core runs v2 (External package runtime)",
  },
  {
    part: "provider-kubernetes",
    pin: { env: "PROVIDER_KUBERNETES_VERSION" },
    checkedFor: "1.3.1",
    policy: "the newest release",
    ended:
      "v1.4.1 is out; v1.4 needs Go 1.27.1 and a crossplane-runtime pre-release the module proxy refuses",
    move: "`PROVIDER_KUBERNETES_VERSION` and `crossplane.providerKubernetes`",
  },
  {
    part: "Pulumi CLI and @pulumi/pulumi",
    pin: { env: "PULUMI_VERSION" },
    checkedFor: "3.276.0",
    policy: "the newest release",
    // 3.276.0 is the newest both npm and the module proxy serve; the CLI and @pulumi/pulumi stay equal.
    ended: "v3.277.0 is out (module proxy, 2026-11-18); npm does not serve @pulumi/pulumi 3.277.0",
    move: "`PULUMI_VERSION` and `@pulumi/pulumi`, together",
  },
  {
    part: "Pulumi's Python SDK (toolchain venv)",
    pin: { env: "PULUMI_PYTHON_VERSION" },
    checkedFor: "3.272.0",
    policy: "the newest release",
    // PyPI's newest here; it lags npm and the module proxy, and may lag the CLI, never lead it.
    ended: "3.276.0 is out (npm); PyPI serves 3.272.0 at most",
    move: "`PULUMI_PYTHON_VERSION` and python-constraints.txt, up to `PULUMI_VERSION`",
  },
  {
    part: "@pulumi/kubernetes and its provider",
    pin: { env: "PULUMI_KUBERNETES_VERSION" },
    checkedFor: "4.25.0",
    policy: "the newest release",
    ended: "4.34.2 is out (npm, 2026-12-01)",
    move: "`PULUMI_KUBERNETES_VERSION`, its module version and `@pulumi/kubernetes`",
  },
  {
    part: "CoreDNS (local clusters)",
    pin: { env: "COREDNS_VERSION" },
    checkedFor: "1.15.0",
    policy: "the newest release",
    endsWhen: "CoreDNS releases again",
    move: "`COREDNS_VERSION`",
  },
  {
    part: "@kubernetes/client-node",
    pin: { npm: "@kubernetes/client-node" },
    checkedFor: "2.0.1",
    policy: "the newest major",
    // npm's newest on 2026-12-05 (its versions end at 2.0.1); 1.x got no release after 1.4.0.
    endsWhen: "client-node 3.0.0 ships",
    move: "package.json",
  },
  {
    part: "TypeScript (type check, lint)",
    pin: { npm: "typescript" },
    checkedFor: "6.0.3",
    policy: "the newest release; 6.0 is the JavaScript compiler's last",
    // npm's newest 6 on 2026-12-05; 7.0.2, the native compiler, has no compiler API that the
    // project's tools (typescript-eslint, dependency-cruiser, @pulumi/pulumi) could load.
    ended: "7.0.2 is out (npm, 2026-07-08); typescript-eslint takes TypeScript below 6.1 only",
    move: "package.json, within typescript-eslint's peer range",
  },
];

/** The pinned version of a part, from versions.env or package.json. */
export function pinnedVersion(pin: Pin, root: string = ROOT): string {
  if ("fixed" in pin) return pin.fixed;
  if ("npm" in pin) {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const version = pkg.dependencies?.[pin.npm] ?? pkg.devDependencies?.[pin.npm];
    if (!version) throw new Error(`package.json has no ${pin.npm}`);
    return version;
  }
  const text = fs.readFileSync(path.join(root, "host", "toolchain", "versions.env"), "utf8");
  const version = new RegExp(`^${pin.env}=(.+)$`, "m").exec(text)?.[1];
  if (!version) throw new Error(`host/toolchain/versions.env has no ${pin.env}`);
  return version;
}

/** A part's standing on `today` (YYYY-MM-DD): past its end, ending within 90 days, or supported. */
export function standing(
  window: SupportWindow,
  today: string,
  pinned: string,
): { past: boolean; text: string } {
  if (pinned !== window.checkedFor) {
    return {
      past: true,
      text: `UNCHECKED: the row was read for ${window.checkedFor} (host/toolchain/support-windows.ts)`,
    };
  }
  if (window.ended) return { past: true, text: `PAST ITS END: ${window.ended}` };
  if (window.ends && window.ends < today) return { past: true, text: `PAST ITS END since ${window.ends}` };
  if (window.ends) {
    const days = Math.round((Date.parse(window.ends) - Date.parse(today)) / 86_400_000);
    return { past: false, text: days <= 90 ? `ends in ${days} days` : `supported until ${window.ends}` };
  }
  return { past: false, text: `supported until ${window.endsWhen ?? "a newer release"}` };
}
