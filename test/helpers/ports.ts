/**
 * The one source of the TCP ports the slow test files bind. mocha runs the e2e and data-plane
 * files two at a time (host/scripts/test.sh), so each file that binds fixed ports gets a band of its
 * own here; no two bands meet, so no two files can take each other's ports. A file asks by its
 * own path (`portsFor(__filename)`), and host/scripts/test-ports.test.ts checks both the table and
 * that no slow file picks a port of its own.
 */
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";
import { COREDNS_HEALTH_PORT, COREDNS_READY_PORT } from "../../host/local-clusters/node/cluster-dns";
import {
  KUBELET_HEALTHZ_PORT,
  KUBELET_PORT,
  PROXY_HEALTHZ_PORT,
  SCHEDULER_PORT,
} from "../../host/local-clusters/node/config";

/** A closed range of TCP ports, `from` to `to` inclusive. */
export interface PortBand {
  from: number;
  to: number;
}

/** A file's band, cut into `slots` equal parts of which each run takes one at random. */
export interface FileBand extends PortBand {
  slots: number;
}

/**
 * Linux's default ip_local_port_range: the kernel gives client sockets (and `listen(0)`, which
 * the local clusters' API servers and etcd use) local ports from here, so a fixed port inside it
 * can be taken by any connection (seen: HAProxy's bind failed as the API server's connection to
 * etcd held the port).
 */
export const EPHEMERAL_PORTS: PortBand = { from: 32768, to: 60999 };

/** kube-apiserver's default --service-node-port-range, which the local clusters keep. */
export const NODE_PORT_RANGE: PortBand = { from: 30000, to: 32767 };

/** The fixed ports a local cluster's node components listen on. */
export const LOCAL_CLUSTER_PORTS: readonly number[] = [
  KUBELET_PORT,
  KUBELET_HEALTHZ_PORT,
  PROXY_HEALTHZ_PORT,
  SCHEDULER_PORT,
  COREDNS_READY_PORT,
  COREDNS_HEALTH_PORT,
];

/**
 * Host ports (127.0.0.1 and 0.0.0.0), by the file that binds them: between the local clusters'
 * fixed ports and the NodePort range. A run takes one slot of its file's band at random, so two
 * runs of one file on one machine rarely meet either: HAProxy binds with SO_REUSEPORT (its reloads
 * need it), so two runs on one range would silently share listeners and send each other's clients
 * to the wrong proxy (seen: psql answered by another run's health page, "invalid response to SSL
 * negotiation: H").
 */
export const HOST_PORT_BANDS: Readonly<Record<string, FileBand>> = {
  "test/e2e/engine-locks.test.ts": { from: 10260, to: 10279, slots: 1 },
  "test/e2e/s3-state-credentials.test.ts": { from: 10280, to: 10299, slots: 1 },
  "test/dataplane/proxy.test.ts": { from: 10300, to: 10999, slots: 1 },
  "test/dataplane/wireguard-agent.test.ts": { from: 11000, to: 11499, slots: 1 },
  "test/e2e/provider-sdks.test.ts": { from: 11500, to: 12499, slots: 1 },
  "test/e2e/provider-yaml.test.ts": { from: 12500, to: 12999, slots: 1 },
  "test/e2e/wireguard.test.ts": { from: 13000, to: 13499, slots: 5 },
  "test/bench/proxy.ts": { from: 13500, to: 13999, slots: 1 },
  "test/e2e/bridge.test.ts": { from: 14000, to: 19999, slots: 6 },
  "test/e2e/network-preview.test.ts": { from: 20000, to: 22999, slots: 6 },
  "test/e2e/network-preview-stack.test.ts": { from: 23000, to: 24999, slots: 5 },
  "test/bench/bridge.ts": { from: 25000, to: 29999, slots: 1 },
};

/**
 * NodePorts, by the file whose local cluster serves them: inside NODE_PORT_RANGE, as the API
 * server refuses others. They are bound on a node's address, not the host's, yet kept apart too.
 */
export const NODE_PORT_BANDS: Readonly<Record<string, FileBand>> = {
  "test/e2e/bridge-pod.test.ts": { from: 30100, to: 30299, slots: 1 },
  "test/e2e/bridge.test.ts": { from: 31500, to: 31599, slots: 1 },
};

/** The table key of a file: its path from the repository root, with forward slashes. */
export function fileKey(file: string): string {
  return path.relative(repoRoot, file).split(path.sep).join("/");
}

/** A band as the bridge's and the preview's --port-range take it. */
export function bandArg(band: PortBand): string {
  return `${band.from}-${band.to}`;
}

/** The ports of one run of one file, handed out in order so no two of its own uses meet. */
export class FilePorts {
  private next: number;

  constructor(
    readonly file: string,
    readonly slot: PortBand,
  ) {
    this.next = slot.from;
  }

  /** The next `count` consecutive ports; throws when the file's slot has no room left. */
  block(count: number): PortBand {
    const from = this.next;
    const to = from + count - 1;
    if (to > this.slot.to)
      throw new Error(
        `${this.file} needs ${count} more ports, past its slot ${bandArg(this.slot)} (test/helpers/ports.ts)`,
      );
    this.next = to + 1;
    return { from, to };
  }

  /** The next single port. */
  one(): number {
    return this.block(1).from;
  }
}

function slotOf(file: string, bands: Readonly<Record<string, FileBand>>, kind: string): FilePorts {
  const key = fileKey(file);
  const band = bands[key];
  if (!band) throw new Error(`${key} has no ${kind} port band: add one in test/helpers/ports.ts`);
  const size = Math.floor((band.to - band.from + 1) / band.slots);
  const from = band.from + size * Math.floor(Math.random() * band.slots);
  return new FilePorts(key, { from, to: from + size - 1 });
}

/** The host ports of this run of `file` (pass `__filename`): one random slot of its band. */
export function portsFor(file: string): FilePorts {
  return slotOf(file, HOST_PORT_BANDS, "host");
}

/** The NodePorts this run of `file` may give its cluster's Services. */
export function nodePortsFor(file: string): FilePorts {
  return slotOf(file, NODE_PORT_BANDS, "NodePort");
}
