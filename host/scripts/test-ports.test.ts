import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../automation/toolchain";
import {
  EPHEMERAL_PORTS,
  HOST_PORT_BANDS,
  LOCAL_CLUSTER_PORTS,
  NODE_PORT_BANDS,
  NODE_PORT_RANGE,
  fileKey,
  nodePortsFor,
  portsFor,
  type FileBand,
  type PortBand,
} from "../../test/helpers/ports";

/** Where the slow test files and their helpers live: mocha runs these files side by side. */
const SCANNED_DIRS = ["test/e2e", "test/dataplane", "test/helpers"];

/**
 * Ports that may stand in a slow file as literals, as none is bound on the host's loopback where
 * two files meet: each lives in a pod's or a network namespace's own network, or is a claim's
 * instance port, or a value the API must refuse.
 */
const SERVICE_PORTS: ReadonlyMap<number, string> = new Map([
  [5432, "PostgreSQL in a pod or namespace, and claims' instance port"],
  [5433, "a second port of that PostgreSQL Service"],
  [7777, "a probe listener inside a data-plane namespace"],
  // The a9s data services' servers and the Service ports their bindings name
  // (test/helpers/a9s-servers.ts), in pods; the images' smoke test runs them in a namespace of its own.
  [3000, "Grafana's port of an a9s Prometheus Service, inside the node's network"],
  [3306, "MariaDB in a pod or namespace"],
  [5672, "RabbitMQ's AMQP in a pod or namespace"],
  [6379, "Redis in a pod or namespace"],
  [9090, "Prometheus in a pod or namespace"],
  [9093, "Alertmanager in a pod or namespace"],
  [9109, "the Graphite exporter's port of an a9s Prometheus Service, inside the node's network"],
  [15672, "RabbitMQ's management API in a pod or namespace"],
  [27017, "an a9s MongoDB member's Service port, in front of a stand-in server in a pod"],
  [8080, "a web container's port inside its pod"],
  [8405, "a HAProxy health port inside its pod"],
  [51820, "WireGuard's listen port inside a namespace or pod"],
  [51821, "the WireGuard agent's config port inside a namespace"],
  [65536, "a port the CRD's validation must refuse"],
]);

/** Literals that name a port yet are never bound on the host, by file. */
const NOT_HOST_PORTS: Readonly<Record<string, readonly number[]>> = {
  // An endpoint a stub Pulumi program reports, compared as data.
  "test/e2e/engine-run.test.ts": [22000, 22003],
  // A claim status the composition copies, compared as data.
  "test/e2e/composition-render.test.ts": [40001],
  // The network preview doc's example command (docs/network-preview.md), which that file lists as skipped.
  "test/e2e/local-stack.test.ts": [46200, 46399],
  // Node ports of the file's own API server, which has no node: allocated there, never bound.
  "test/e2e/node-port-probe.test.ts": [5000, 5100, 30000, 30099, 30500, 30599, 32767],
  // A ClusterIP Service's port, inside the node's network.
  "test/e2e/node.test.ts": [15432],
  // API server addresses of kubeconfigs, and a fake node's registry address, never dialled.
  "test/helpers/kubeconfig.ts": [6443, 5000],
  "test/helpers/mocks.ts": [6443],
  // A planner's NodePort range in unit-test targets: planned as data, never bound.
  "test/helpers/wireguard-fixtures.ts": [30000, 30099],
};

/** The shapes in which a file would pick a port of its own rather than ask test/helpers/ports.ts. */
const PORT_LITERALS: readonly RegExp[] = [
  // port: 20000, opsPort = 19464, PORT_RANGE = "30100-30199", portRange: { from: 31500, to: 31599 }
  /\b\w*port\w*["']?\s*[:=]\s*["'{ ]*(?:from:\s*)?(\d+)/gi,
  /\b(?:from|to):\s*(\d+)/g,
  // 20000 + Math.floor(Math.random() * 500)
  /\b(\d+)\s*\+\s*(?:\d+\s*\*\s*)?Math\./g,
  // "--port-range", "30100-30199" or `--port-range 46200-46399`, and any other "N-M" band
  /\b(\d{4,5})\s*-\s*\d{4,5}\b/g,
  /\b\d{4,5}\s*-\s*(\d{4,5})\b/g,
  // "127.0.0.1:8080", `bind :8405`, "--ops-port", "19000"
  /[\w\])}]?:(\d{4,5})\b/g,
  /--[\w-]*port[\w-]*["'`]?,?\s*(?:String\()?["'`]?(\d+)/gi,
  // listen(20000), .listen(20000, "127.0.0.1")
  /\blisten\(\s*(\d+)/g,
];

const overlaps = (a: PortBand, b: PortBand): boolean => a.from <= b.to && b.from <= a.to;
const show = (b: PortBand): string => `${b.from}-${b.to}`;

/** The machine's ephemeral range where it can be read, else Linux's default. */
function ephemeralPorts(): PortBand {
  try {
    const [from, to] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    return { from: Number(from), to: Number(to) };
  } catch {
    return EPHEMERAL_PORTS;
  }
}

/** The TypeScript files below `dir`, relative to the repository root. */
function sourcesUnder(dir: string): string[] {
  return fs
    .readdirSync(path.join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => fileKey(path.join(e.parentPath, e.name)));
}

/** Source without its comments, line breaks kept so reported lines stay true. */
function withoutComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Port-like literals above the privileged ports in `source`: `line: literal` for each. */
function portLiterals(source: string): { line: number; port: number }[] {
  const found: { line: number; port: number }[] = [];
  withoutComments(source)
    .split("\n")
    .forEach((text, i) => {
      for (const pattern of PORT_LITERALS)
        for (const m of text.matchAll(pattern)) {
          const port = Number(m[1]);
          if (port > 1024 && port <= 65536) found.push({ line: i + 1, port });
        }
    });
  return found;
}

describe("the slow test files' ports (test/helpers/ports.ts)", () => {
  const hostBands = Object.entries(HOST_PORT_BANDS);
  const nodeBands = Object.entries(NODE_PORT_BANDS);

  it("gives no two files the same host port", () => {
    for (const [i, [a, band]] of hostBands.entries())
      for (const [b, other] of hostBands.slice(i + 1))
        assert.ok(!overlaps(band, other), `${a} ${show(band)} meets ${b} ${show(other)}`);
  });

  it("keeps host bands clear of the ephemeral ports, the NodePort range and the local clusters' ports", () => {
    for (const ephemeral of [ephemeralPorts(), EPHEMERAL_PORTS])
      for (const [file, band] of hostBands)
        assert.ok(
          !overlaps(band, ephemeral),
          `${file} ${show(band)} meets the ephemeral ports ${show(ephemeral)}`,
        );
    for (const [file, band] of hostBands) {
      assert.ok(!overlaps(band, NODE_PORT_RANGE), `${file} ${show(band)} meets the NodePort range`);
      for (const port of LOCAL_CLUSTER_PORTS)
        assert.ok(
          port < band.from || port > band.to,
          `${file} ${show(band)} holds local cluster port ${port}`,
        );
      assert.ok(band.from > 1024, `${file} ${show(band)} reaches the privileged ports`);
    }
  });

  it("keeps NodePort bands inside the NodePort range and apart", () => {
    for (const [i, [file, band]] of nodeBands.entries()) {
      assert.ok(band.from >= NODE_PORT_RANGE.from && band.to <= NODE_PORT_RANGE.to, `${file} ${show(band)}`);
      for (const [other, b] of nodeBands.slice(i + 1))
        assert.ok(!overlaps(band, b), `${file} ${show(band)} meets ${other} ${show(b)}`);
    }
  });

  it("names only files that exist, each band cut into whole slots", () => {
    for (const [file, band] of [...hostBands, ...nodeBands] as [string, FileBand][]) {
      assert.ok(fs.existsSync(path.join(repoRoot, file)), `${file} is gone: move its band with it`);
      assert.ok(band.to >= band.from && band.slots >= 1, `${file} ${show(band)}`);
      assert.equal((band.to - band.from + 1) % band.slots, 0, `${file}: ${band.slots} slots`);
    }
  });

  it("hands each run ports inside its file's band, never the same one twice", () => {
    for (const [file, band] of hostBands) {
      const ports = portsFor(path.join(repoRoot, file));
      const first = ports.one();
      const block = ports.block(10);
      assert.ok(first >= band.from && block.to <= band.to, `${file}: ${first}, ${show(block)}`);
      assert.ok(block.from > first);
    }
    const node = nodePortsFor(path.join(repoRoot, "test/e2e/bridge-pod.test.ts")).block(100);
    assert.deepEqual(node, { from: 30100, to: 30199 });
    assert.throws(() => portsFor(path.join(repoRoot, "test/e2e/no-such.test.ts")), /no host port band/);
    assert.throws(
      () => nodePortsFor(path.join(repoRoot, "test/e2e/bridge-pod.test.ts")).block(201),
      /past its slot/,
    );
  });

  it("leaves no slow test file a port literal of its own: they take their ports from the allocator", () => {
    const strays: string[] = [];
    for (const file of SCANNED_DIRS.flatMap(sourcesUnder)) {
      if (file === "test/helpers/ports.ts") continue;
      const allowed = new Set(NOT_HOST_PORTS[file] ?? []);
      for (const { line, port } of portLiterals(fs.readFileSync(path.join(repoRoot, file), "utf8")))
        if (!SERVICE_PORTS.has(port) && !allowed.has(port)) strays.push(`${file}:${line}: ${port}`);
    }
    assert.deepEqual(strays, [], "take these from portsFor()/nodePortsFor() in test/helpers/ports.ts");
  });

  it("finds a port picked by hand in any of the shapes the files used", () => {
    const samples = [
      "const opsPort = 19464 + Math.floor(Math.random() * 500);",
      'const PORT_RANGE = "30100-30199";',
      "portRange: { from: 31500, to: 31599 },",
      '...["--ops-port", String(19000)],',
      "server.listen(20000);",
      "fetch(`http://127.0.0.1:20464/metrics`)",
    ];
    for (const s of samples) assert.notDeepEqual(portLiterals(s), [], s);
    assert.deepEqual(portLiterals("// port 20000 in a comment\nawait eventually(x, 60000);"), []);
  });
});
