import { strict as assert } from "node:assert";
import { linkParents, type ProcessRecord } from "./accounting";
import { cpuReport, renderCpuReport } from "./report";

const record = (r: Partial<ProcessRecord> & Pick<ProcessRecord, "command">): ProcessRecord => ({
  cpuSeconds: 1,
  elapsedSeconds: 1,
  pid: 0,
  ppid: 0,
  startedAt: 0,
  ...r,
});

/** The first record of a run: `accton` turning accounting on, at second 0. */
const accton = record({ command: "accton", cpuSeconds: 0, elapsedSeconds: 0 });

describe("the CPU report of a run's processes", () => {
  it("puts each process in its kind: Node.js under the Pulumi engine apart from the rest", () => {
    const nodes = linkParents([
      accton,
      record({ command: "kube-apiserver", cpuSeconds: 40, pid: 10, elapsedSeconds: 120 }),
      record({ command: "kube-controller", cpuSeconds: 5, pid: 11, elapsedSeconds: 120 }),
      record({ command: "containerd-shim", cpuSeconds: 2, pid: 12 }),
      record({ command: "pulumi", cpuSeconds: 3, pid: 20, ppid: 30, startedAt: 10, elapsedSeconds: 20 }),
      record({ command: "MainThread", cpuSeconds: 7, pid: 21, ppid: 20, startedAt: 12 }),
      record({ command: "pulumi-resource", cpuSeconds: 1, pid: 22, ppid: 20, startedAt: 12 }),
      record({ command: "MainThread", cpuSeconds: 6, pid: 30, startedAt: 5, elapsedSeconds: 60 }),
      record({ command: "kubectl", cpuSeconds: 0.5, pid: 31, ppid: 30, startedAt: 6 }),
      record({ command: "sha256sum", cpuSeconds: 0.25, pid: 32 }),
      record({ command: "npm exec mocha", cpuSeconds: 0.5, pid: 40, startedAt: 100, elapsedSeconds: 50 }),
      record({ command: "MainThread", cpuSeconds: 9, pid: 41, ppid: 40, startedAt: 101, elapsedSeconds: 40 }),
      record({ command: "MainThread", cpuSeconds: 4, pid: 42, ppid: 41, startedAt: 102 }),
    ]);
    const r = cpuReport(nodes, { cores: 2 });
    const group = (prefix: string) => r.groups.find((g) => g.name.startsWith(prefix));
    assert.equal(group("Kubernetes control planes")?.cpuSeconds, 45);
    assert.equal(group("nodes")?.cpuSeconds, 2);
    assert.equal(group("Pulumi CLI")?.cpuSeconds, 3);
    assert.equal(group("Pulumi providers")?.cpuSeconds, 1);
    assert.equal(group("Node.js started by the Pulumi engine")?.cpuSeconds, 7);
    assert.equal(group("Node.js under mocha")?.cpuSeconds, 13, "the mocha process and the workers it starts");
    assert.equal(group("Node.js, the rest")?.cpuSeconds, 6.5, "the driver and npm itself");
    assert.equal(group("kubectl")?.cpuSeconds, 0.5);
    assert.equal(group("other")?.cpuSeconds, 0.25);
    assert.equal(r.cpuSeconds, 78.25);
    assert.equal(
      r.groups.reduce((s, g) => s + g.cpuSeconds, 0),
      r.cpuSeconds,
    );
    assert.equal(r.groups[0]!.name, "Kubernetes control planes", "most first");
    assert.equal(group("Go builds"), undefined, "a kind with no process is left out");
    assert.deepEqual(r.commands[0], { command: "kube-apiserver", cpuSeconds: 40, processes: 1 });
    assert.deepEqual(
      r.commands.find((c) => c.command === "MainThread"),
      { command: "MainThread", cpuSeconds: 26, processes: 4 },
    );
  });

  it("spreads each process's CPU over the minutes it lived in, and counts only what it used in the run", () => {
    const r = cpuReport(
      linkParents([
        accton,
        record({ command: "a", cpuSeconds: 60, startedAt: 0, elapsedSeconds: 120 }),
        record({ command: "b", cpuSeconds: 30, startedAt: 90, elapsedSeconds: 60 }),
        record({ command: "c", cpuSeconds: 6, startedAt: 170, elapsedSeconds: 0 }),
        // Started 49 minutes before accounting, ended in its first minute: 0.05 CPU-s a second.
        record({ command: "daemon", cpuSeconds: 150, startedAt: -2940, elapsedSeconds: 3000 }),
      ]),
      { cores: 2 },
    );
    assert.equal(r.wallSeconds, 170);
    assert.equal(r.cpuSeconds, 99, "of the daemon, only its minute in the run");
    assert.equal(r.beforeCpuSeconds, 147);
    assert.match(
      renderCpuReport(r),
      / Left out: 147 CPU-s that processes started earlier used before accounting began\./,
    );
    // a: 30 CPU-s in each of minutes 0 and 1; b: 15 in minute 1 and 15 in minute 2; c: 6 in
    // minute 2; the daemon: the 3 CPU-s of its last minute, in minute 0.
    assert.deepEqual(
      r.perMinute.map((c) => Math.round(c * 1000) / 1000),
      [0.55, 0.75, 0.35],
    );
  });

  it("renders the totals with the floor they set, the tables, and a bar per minute", () => {
    const r = cpuReport(
      linkParents([
        accton,
        record({ command: "kube-apiserver", cpuSeconds: 240, startedAt: 0, elapsedSeconds: 120 }),
        record({ command: "kubectl", cpuSeconds: 60, startedAt: 60, elapsedSeconds: 60 }),
      ]),
      { cores: 2 },
    );
    const text = renderCpuReport(r);
    assert.match(
      text,
      /^\*\*300 CPU-s in 2\.0 min, 3 processes:\*\* 2\.50 of 2 cores busy on average \(125 %\)\. On 2 cores with none idle this work takes 2\.5 min\./,
    );
    assert.match(text, /\| Kubernetes control planes \| 240 \| 80 % \| 1 \|/);
    assert.match(text, /\| `kubectl` \| 60 \| 1 \|/);
    const bars = text.split("```")[1]!.split("\n").filter(Boolean);
    assert.equal(bars.length, 2);
    assert.equal(bars[0], `  0  2.00 ${"█".repeat(40)}`);
    assert.equal(bars[1], `  1  3.00 ${"█".repeat(40)}`, "a bar never runs past the machine's cores");
  });

  it("draws a part of a core in eighths of a character", () => {
    const oneMinute = (cpuSeconds: number) =>
      renderCpuReport(
        cpuReport(
          linkParents([accton, record({ command: "x", cpuSeconds, startedAt: 0, elapsedSeconds: 60 })]),
          {
            cores: 2,
          },
        ),
      );
    // 1.05 cores of 2 on 40 characters: 21 characters.
    assert.ok(oneMinute(63).includes(`  0  1.05 ${"█".repeat(21)}\n`), oneMinute(63));
    // 0.025 cores: half a character, four eighths.
    assert.ok(oneMinute(1.5).includes("  0  0.03 ▌\n"), oneMinute(1.5));
  });
});
