/**
 * Where a run's CPU went, from its process accounting (accounting.ts): CPU-seconds by kind of
 * process, the commands that took most, and how many cores were busy minute by minute. Pure.
 */
import { hasAncestor, type ProcessNode } from "./accounting";

/** A kind of process, by its command name (and, for Node.js, by who started it). */
interface Group {
  name: string;
  matches: (node: ProcessNode) => boolean;
}

const isPulumi = (command: string) => command === "pulumi";
const isNode = (command: string) => /^(node|MainThread|npm|npx)$|^npm /.test(command);

/**
 * First match wins. The names are the kernel's (15 characters at most: kube-controller-manager is
 * `kube-controller`, containerd-shim-runc-v2 `containerd-shim`); Node.js names its main thread
 * `MainThread`, which is what a Node.js process's record carries.
 */
export const GROUPS: readonly Group[] = [
  {
    name: "Kubernetes control planes",
    matches: (n) => /^(kube-apiserver|etcd|kube-controller|kube-scheduler)$/.test(n.command),
  },
  {
    name: "nodes (containerd, kubelet, kube-proxy, ctr)",
    matches: (n) =>
      /^(containerd|containerd-shim|kubelet|kube-proxy|ctr|runc|coredns|pause)$/.test(n.command),
  },
  { name: "Crossplane and its provider", matches: (n) => /^(crossplane|crank|provider)$/.test(n.command) },
  {
    name: "Pulumi CLI",
    matches: (n) => isPulumi(n.command) || /^pulumi-(language|analyzer)/.test(n.command),
  },
  { name: "Pulumi providers (Go plugins)", matches: (n) => /^pulumi-resource/.test(n.command) },
  {
    name: "Node.js started by the Pulumi engine (programs, dynamic providers, policy packs)",
    matches: (n) => isNode(n.command) && hasAncestor(n, isPulumi),
  },
  {
    name: "Node.js under mocha (test workers, the bridges and scripts tests start)",
    matches: (n) => isNode(n.command) && hasAncestor(n, (c) => c.startsWith("npm exec mocha")),
  },
  { name: "Node.js, the rest (checks, npm, scripts)", matches: (n) => isNode(n.command) },
  { name: "kubectl", matches: (n) => n.command === "kubectl" },
  {
    name: "data path (HAProxy, WireGuard, socat, PostgreSQL)",
    matches: (n) => /^(haproxy|wireguard-go|wg|socat|postgres|psql|pgbench)$/.test(n.command),
  },
  { name: "Go builds", matches: (n) => /^(go|compile|link|asm|cgo|vet)$/.test(n.command) },
];
const OTHER = "other";

export interface CpuReport {
  /** From the first record's end (accounting on) to the last one's, in seconds. */
  wallSeconds: number;
  /** The CPU the processes used in the run (each one's spread evenly over its life). */
  cpuSeconds: number;
  /** What processes started before accounting used before it began: in no figure above. */
  beforeCpuSeconds: number;
  processes: number;
  cores: number;
  groups: { name: string; cpuSeconds: number; processes: number }[];
  /** The commands that took most CPU, most first. */
  commands: { command: string; cpuSeconds: number; processes: number }[];
  /** Cores busy in each minute of the run (each process's CPU spread evenly over its life). */
  perMinute: number[];
}

/** The report of a run's processes on a machine of `cores` cores. */
export function cpuReport(
  nodes: readonly ProcessNode[],
  options: { cores: number; top?: number },
): CpuReport {
  // The run began when its first record ended (the first is `accton`'s own): a daemon started
  // long before accounting and ended in it carries its old start. Not Math.min(...list): a CI run
  // has about 70,000 records, past what a call's arguments take.
  const start = nodes.reduce((m, n) => Math.min(m, n.startedAt + n.elapsedSeconds), Infinity);
  const end = nodes.reduce((m, n) => Math.max(m, n.startedAt + n.elapsedSeconds), -Infinity);
  const wallSeconds = nodes.length === 0 ? 0 : end - start;
  const groups = new Map<string, { cpuSeconds: number; processes: number }>(
    [...GROUPS.map((g) => g.name), OTHER].map((name) => [name, { cpuSeconds: 0, processes: 0 }]),
  );
  const commands = new Map<string, { cpuSeconds: number; processes: number }>();
  const minutes = new Array<number>(Math.max(1, Math.ceil(wallSeconds / 60))).fill(0);
  let cpuSeconds = 0;
  let beforeCpuSeconds = 0;
  for (const n of nodes) {
    // A process that began before the run counts with the part of its life inside the run.
    const before = n.startedAt < start ? (n.cpuSeconds * (start - n.startedAt)) / n.elapsedSeconds : 0;
    const cpu = n.cpuSeconds - before;
    beforeCpuSeconds += before;
    cpuSeconds += cpu;
    const group = groups.get(GROUPS.find((g) => g.matches(n))?.name ?? OTHER)!;
    group.cpuSeconds += cpu;
    group.processes += 1;
    const command = commands.get(n.command) ?? { cpuSeconds: 0, processes: 0 };
    command.cpuSeconds += cpu;
    command.processes += 1;
    commands.set(n.command, command);
    spread(minutes, n.startedAt - start, n.elapsedSeconds, n.cpuSeconds);
  }
  return {
    wallSeconds,
    cpuSeconds,
    beforeCpuSeconds,
    processes: nodes.length,
    cores: options.cores,
    groups: [...groups]
      .map(([name, g]) => ({ name, ...g }))
      .filter((g) => g.processes > 0)
      .sort((a, b) => b.cpuSeconds - a.cpuSeconds),
    commands: [...commands]
      .map(([command, c]) => ({ command, ...c }))
      .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
      .slice(0, options.top ?? 12),
    perMinute: minutes.map((cpu) => cpu / 60),
  };
}

/** Adds `cpu` seconds to the minutes a process lived in, in proportion to its time in each. */
function spread(minutes: number[], from: number, elapsed: number, cpu: number): void {
  if (elapsed <= 0) {
    const i = Math.min(minutes.length - 1, Math.max(0, Math.floor(from / 60)));
    minutes[i] = minutes[i]! + cpu;
    return;
  }
  const to = from + elapsed;
  // What a process used before the run began is in no minute (nor in the totals).
  for (let i = Math.max(0, Math.floor(from / 60)); i < minutes.length && i * 60 < to; i++) {
    const overlap = Math.min(to, (i + 1) * 60) - Math.max(from, i * 60);
    minutes[i] = minutes[i]! + (cpu * overlap) / elapsed;
  }
}

/** Whole CPU-seconds, or tenths below ten (a single command's). */
const seconds = (s: number) => (s < 10 ? s.toFixed(1) : Math.round(s).toLocaleString("en-US"));
const percent = (part: number, whole: number) => (whole > 0 ? `${Math.round((100 * part) / whole)} %` : "-");

/** One bar per minute, eight steps to a character, a full row being all the machine's cores. */
function bar(cores: number, of: number, width: number): string {
  const eighths = Math.round((Math.min(cores, of) / of) * width * 8);
  return "█".repeat(Math.floor(eighths / 8)) + (eighths % 8 ? "▏▎▍▌▋▊▉"[(eighths % 8) - 1] : "");
}

/**
 * The report as Markdown: the totals and the floor they set (the CPU-seconds on all cores with
 * none idle), the groups, the top commands, and a bar per minute of the cores busy.
 */
export function renderCpuReport(r: CpuReport): string {
  const busy = r.wallSeconds > 0 ? r.cpuSeconds / r.wallSeconds : 0;
  const lines = [
    `**${seconds(r.cpuSeconds)} CPU-s in ${(r.wallSeconds / 60).toFixed(1)} min, ${r.processes.toLocaleString("en-US")} processes:** ` +
      `${busy.toFixed(2)} of ${r.cores} cores busy on average (${percent(busy, r.cores)}). ` +
      `On ${r.cores} cores with none idle this work takes ${(r.cpuSeconds / r.cores / 60).toFixed(1)} min.` +
      (r.beforeCpuSeconds >= 0.5
        ? ` Left out: ${seconds(r.beforeCpuSeconds)} CPU-s that processes started earlier used before accounting began.`
        : ""),
    "",
    "| kind of process | CPU-s | share | processes |",
    "| --- | ---: | ---: | ---: |",
    ...r.groups.map(
      (g) =>
        `| ${g.name} | ${seconds(g.cpuSeconds)} | ${percent(g.cpuSeconds, r.cpuSeconds)} | ${g.processes.toLocaleString("en-US")} |`,
    ),
    "",
    "| command | CPU-s | processes |",
    "| --- | ---: | ---: |",
    ...r.commands.map(
      (c) => `| \`${c.command}\` | ${seconds(c.cpuSeconds)} | ${c.processes.toLocaleString("en-US")} |`,
    ),
    "",
    `Cores busy, minute by minute (a full bar is ${r.cores} cores):`,
    "",
    "```",
    ...r.perMinute.map(
      (cores, i) => `${String(i).padStart(3)} ${cores.toFixed(2).padStart(5)} ${bar(cores, r.cores, 40)}`,
    ),
    "```",
  ];
  return `${lines.join("\n")}\n`;
}
