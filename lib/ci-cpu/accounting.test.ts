import { strict as assert } from "node:assert";
import { hasAncestor, linkParents, parseDumpAcct, type ProcessRecord } from "./accounting";

/**
 * `dump-acct` lines of one `npm run pulumi -- preview` of the local stack, as acct 6.6.4 printed
 * them on Debian 12 (2026-11-29): npm, the Automation API's driver, a `pulumi version`, the engine
 * (`pulumi preview`), the Kubernetes provider it started, and the dynamic-provider host with its
 * child. In the order the kernel wrote them: when each ended.
 */
const DUMP = `pulumi          |v3|    28.00|     4.00|    31.00|     0|     0|1375744.00|330624.00|   24729|   24634|S   X|       0|__      |Sun Nov 29 07:30:54 2026
MainThread      |v3|     5.00|     1.00|    21.00|     0|     0|474560.00| 61184.00|   24875|   24874|S   X|       0|__      |Sun Nov 29 07:31:02 2026
MainThread      |v3|    79.00|    12.00|   267.00|     0|     0|1570304.00|936960.00|   24874|   24761|S   X|       0|__      |Sun Nov 29 07:31:02 2026
pulumi-resource |v3|    20.00|     4.00|   489.00|     0|     0|1424384.00|260096.00|   24846|   24761|S   X|       0|__      |Sun Nov 29 07:31:00 2026
pulumi          |v3|   156.00|    16.00|   752.00|     0|     0|1443840.00|1866752.00|   24761|   24634|S   X|       0|__      |Sun Nov 29 07:30:57 2026
MainThread      |v3|   613.00|    61.00|  1210.00|     0|     0|662528.00|6656000.00|   24634|   24633|S   X|       0|__      |Sun Nov 29 07:30:52 2026
npm run pulumi  |v3|    33.00|     4.00|  1247.00|     0|     0|1052672.00|396096.00|   24622|   24620|    X|       0|__      |Sun Nov 29 07:30:52 2026
`;

const record = (
  r: Partial<ProcessRecord> & Pick<ProcessRecord, "pid" | "ppid" | "startedAt">,
): ProcessRecord => ({
  command: "x",
  cpuSeconds: 0,
  elapsedSeconds: 1,
  ...r,
});

describe("process accounting records (dump-acct)", () => {
  it("reads command, CPU (user and system, in 1/100 s), elapsed time, pids and start of each record", () => {
    const records = parseDumpAcct(DUMP);
    assert.equal(records.length, 7);
    const driver = records.find((r) => r.pid === 24634)!;
    assert.equal(driver.command, "MainThread");
    assert.equal(driver.cpuSeconds, 6.74);
    assert.equal(driver.elapsedSeconds, 12.1);
    assert.equal(driver.ppid, 24633);
    assert.equal(
      records.find((r) => r.pid === 24622)!.command,
      "npm run pulumi",
      "a name with spaces, trimmed",
    );
    const engine = records.find((r) => r.pid === 24761)!;
    assert.equal(engine.startedAt - driver.startedAt, 5);
  });

  it("refuses a line of another layout, naming its line", () => {
    assert.throws(
      () => parseDumpAcct(`${DUMP.split("\n")[0]}\nbash|0.00|0.00|0.00|1|2|Sun Nov 29 07:30:54 2026\n`),
      /dump-acct line 2 is not an acct v3 record/,
    );
    assert.throws(() => parseDumpAcct(DUMP.replace("|v3|", "|v2|")), /line 1 /);
    assert.throws(() => parseDumpAcct(DUMP.replace("Sun Nov 29 07:30:54 2026", "yesterday")), /line 1 /);
  });

  it("links each process to its parent: program, provider and dynamic-provider host under the engine, the engine under the driver", () => {
    const nodes = linkParents(parseDumpAcct(DUMP));
    const byPid = (pid: number) => nodes.find((n) => n.pid === pid)!;
    assert.equal(byPid(24761).parent, byPid(24634));
    assert.equal(byPid(24846).parent, byPid(24761));
    assert.equal(byPid(24875).parent?.parent, byPid(24761));
    assert.equal(byPid(24634).parent, undefined, "its parent (24633) did not end while accounting was on");
    assert.ok(hasAncestor(byPid(24875), (c) => c === "pulumi"));
    assert.ok(!hasAncestor(byPid(24634), (c) => c === "pulumi"));
  });

  it("takes, of the processes that had the parent's pid, the one alive when the child started", () => {
    const earlier = record({ command: "earlier", pid: 100, ppid: 1, startedAt: 0, elapsedSeconds: 10 });
    const alive = record({ command: "alive", pid: 100, ppid: 1, startedAt: 50, elapsedSeconds: 30 });
    const later = record({ command: "later", pid: 100, ppid: 1, startedAt: 200, elapsedSeconds: 5 });
    const child = record({ command: "child", pid: 101, ppid: 100, startedAt: 60 });
    const orphan = record({ command: "orphan", pid: 102, ppid: 100, startedAt: 150 });
    const nodes = linkParents([child, later, earlier, orphan, alive]);
    assert.equal(nodes[0]!.parent?.command, "alive");
    assert.equal(nodes[3]!.parent, undefined, "no process with pid 100 was alive at 150");
  });

  it("stops walking ancestors that close a loop", () => {
    const [a, b] = linkParents([
      record({ command: "a", pid: 1, ppid: 2, startedAt: 0, elapsedSeconds: 5 }),
      record({ command: "b", pid: 2, ppid: 1, startedAt: 0, elapsedSeconds: 5 }),
    ]);
    assert.equal(a!.parent, b);
    assert.equal(b!.parent, a);
    assert.equal(
      hasAncestor(a!, (c) => c === "c"),
      false,
    );
  });
});
