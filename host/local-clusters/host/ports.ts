import * as fs from "node:fs";
import * as net from "node:net";
import type { ClusterPorts } from "./types";

const LOOPBACK = "127.0.0.1";
const KEYS: (keyof ClusterPorts)[] = ["etcdClient", "etcdPeer", "apiServer", "controllerManager"];

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => resolve(server));
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Whether a port can be bound on 127.0.0.1 right now. Node binds with SO_REUSEADDR, as our
 * components do (see components.ts), so a port whose old connections linger in TIME_WAIT
 * counts as free and only a live listener makes it busy.
 */
export async function isPortFree(port: number): Promise<boolean> {
  try {
    await close(await listen(port));
    return true;
  } catch {
    return false;
  }
}

/**
 * A port the kernel hands out for 127.0.0.1:0 and that is not in `reserved` (ports persisted
 * by other clusters, which may be down right now but want their ports back). The port is
 * added to `reserved` before returning, so concurrent allocations never pick the same one.
 */
export async function allocatePort(reserved: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const server = await listen(0);
    const port = (server.address() as net.AddressInfo).port;
    await close(server);
    if (!reserved.has(port)) {
      reserved.add(port);
      return port;
    }
  }
  throw new Error("could not find a free port on 127.0.0.1");
}

export function readPorts(file: string): ClusterPorts | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const obj = raw as Record<string, unknown>;
  const valid = KEYS.every(
    (k) => Number.isInteger(obj[k]) && (obj[k] as number) > 0 && (obj[k] as number) < 65536,
  );
  return valid ? (obj as unknown as ClusterPorts) : undefined;
}

export function writePorts(file: string, ports: ClusterPorts): void {
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(ports, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/** A port that moved because a foreign process held the persisted one. */
export interface PortMove {
  key: keyof ClusterPorts;
  from: number;
  to: number;
}

/**
 * The cluster's ports: the persisted ones where still free, new ones for those a foreign
 * process now listens on (call this only after the cluster's own processes are stopped, so
 * any listener left is foreign) or when nothing was persisted yet.
 */
export async function ensurePorts(
  persisted: ClusterPorts | undefined,
  reserved: Set<number>,
): Promise<{ ports: ClusterPorts; moved: PortMove[] }> {
  const ports = {} as ClusterPorts;
  const moved: PortMove[] = [];
  for (const key of KEYS) {
    const old = persisted?.[key];
    if (old !== undefined && (await isPortFree(old))) {
      ports[key] = old;
      continue;
    }
    ports[key] = await allocatePort(reserved);
    if (old !== undefined) moved.push({ key, from: old, to: ports[key] });
  }
  return { ports, moved };
}

export function allPorts(ports: ClusterPorts): number[] {
  return KEYS.map((k) => ports[k]);
}
