import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { NODE_LINK_RANGE, slotOf, type NodeLink } from "./addresses";
import { HOST_INTERFACE_PREFIX, type NodeNames } from "./layout";

/**
 * What a node changes on the host, and how it is undone: a network namespace with a veth link
 * to the host, an nft table forwarding the node's API server traffic to loopback, a cgroup per
 * hierarchy for its pods, and the mounts its kubelet and containerd leave under its directory.
 */

const run = promisify(execFile);
const SBIN = { PATH: `/usr/sbin:/sbin:/usr/bin:/bin:${process.env.PATH ?? ""}` };

async function cmd(file: string, args: string[], input?: string): Promise<string> {
  try {
    if (input !== undefined) {
      return await new Promise<string>((resolve, reject) => {
        const child = execFile(file, args, { env: { ...process.env, ...SBIN } }, (err, stdout, stderr) =>
          err ? reject(Object.assign(err as Error, { stderr })) : resolve(stdout),
        );
        // A command that exits before reading its input (a refusal) must fail with its own
        // words, not an uncaught EPIPE from the write.
        child.stdin?.on("error", () => undefined);
        child.stdin?.end(input);
      });
    }
    return (await run(file, args, { env: { ...process.env, ...SBIN } })).stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`${file} ${args.join(" ")}: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** Slots (see addresses.ts) of the node-link addresses on this host's interfaces right now. */
export async function usedSlots(): Promise<Set<number>> {
  const out = await cmd("ip", ["-4", "-o", "addr", "show"]);
  const used = new Set<number>();
  for (const m of out.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)) {
    const slot = slotOf(m[1] as string);
    if (slot !== undefined) used.add(slot);
  }
  return used;
}

/** The address an interface of the host has, if it exists. */
export async function interfaceAddress(name: string): Promise<string | undefined> {
  try {
    const out = await cmd("ip", ["-4", "-o", "addr", "show", "dev", name]);
    return /inet (\d+\.\d+\.\d+\.\d+)\//.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

export function netnsPath(names: NodeNames): string {
  return `/run/netns/${names.netns}`;
}

/**
 * The node's namespace with `eth0` (node address) linked to the host's `kn<id>` (host
 * address), loopback up, and on the host a DNAT of <host address>:<API port> to
 * 127.0.0.1:<API port>: the API server listens on loopback only, and a packet arriving from the
 * node may be sent there only with route_localnet on that one interface.
 */
export async function createNodeNetwork(
  names: NodeNames,
  link: NodeLink,
  apiServerPort: number,
  serviceCidr: string,
  registryPort?: number,
): Promise<void> {
  await deleteNodeNetwork(names);
  const ns = names.netns;
  await cmd("ip", ["netns", "add", ns]);
  await cmd("ip", ["link", "add", names.hostInterface, "type", "veth", "peer", "name", "eth0", "netns", ns]);
  await cmd("ip", ["addr", "add", `${link.hostAddress}/${link.prefixLength}`, "dev", names.hostInterface]);
  await cmd("ip", ["link", "set", names.hostInterface, "up"]);
  await cmd("ip", ["-n", ns, "addr", "add", `${link.nodeAddress}/${link.prefixLength}`, "dev", "eth0"]);
  await cmd("ip", ["-n", ns, "link", "set", "eth0", "up"]);
  await cmd("ip", ["-n", ns, "link", "set", "lo", "up"]);
  // The node has no default route, and a connection from the node itself (curl, a hostNetwork
  // pod) to a ClusterIP needs some route before kube-proxy's DNAT applies: loopback, so a
  // ClusterIP no Service holds goes nowhere (pods' traffic is DNATed before routing anyway).
  await cmd("ip", ["-n", ns, "route", "add", serviceCidr, "dev", "lo"]);
  // Nodes reach each other through the host, as a real cluster's nodes reach another
  // cluster's over their network: an app cluster's pod (masqueraded to its node's address by
  // the bridge CNI's ipMasq) dials the control plane's node at a NodePort. A route to the node
  // links' range only, forwarding on this link only (the host's own ip_forward stays off), and
  // the forward chain below keeps what arrives here from going anywhere but another node.
  await cmd("ip", ["-n", ns, "route", "add", NODE_LINK_RANGE, "via", link.hostAddress]);
  await cmd("sysctl", ["-q", "-w", `net.ipv4.conf.${names.hostInterface}.forwarding=1`]);
  await cmd("sysctl", ["-q", "-w", `net.ipv4.conf.${names.hostInterface}.route_localnet=1`]);
  // Pods reach Services and each other through the node's bridge: forwarding in the node's
  // namespace only (the host's own setting is untouched), and bridged traffic through nftables
  // so kube-proxy's rules see pod-to-pod Service traffic (br_netfilter's sysctl is per namespace).
  await cmd("ip", ["netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]);
  await cmd("ip", ["netns", "exec", ns, "sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=1"]).catch(
    () => undefined, // br_netfilter not loaded: kube-proxy masquerades instead (see kube-proxy config)
  );
  await cmd(
    "nft",
    ["-f", "-"],
    `table ip ${names.nftTable} {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "${names.hostInterface}" ip daddr ${link.hostAddress} tcp dport ${apiServerPort} dnat to 127.0.0.1:${apiServerPort}${
      registryPort === undefined
        ? ""
        : `
    iifname "${names.hostInterface}" ip daddr ${link.hostAddress} tcp dport ${registryPort} dnat to 127.0.0.1:${registryPort}`
    }
  }
  chain forward {
    type filter hook forward priority filter; policy accept;
    iifname "${names.hostInterface}" ip daddr != ${NODE_LINK_RANGE} drop
    iifname "${names.hostInterface}" oifname != "${HOST_INTERFACE_PREFIX}*" drop
  }
}
`,
  );
}

/** Removes the namespace (its veth, bridge and pod links go with it) and the host's nft table. */
export async function deleteNodeNetwork(names: NodeNames): Promise<void> {
  await cmd("nft", ["delete", "table", "ip", names.nftTable]).catch(() => undefined);
  if (fs.existsSync(netnsPath(names)))
    await cmd("ip", ["netns", "delete", names.netns]).catch(() => undefined);
  // A namespace still held by a process keeps its end; the host end must go regardless.
  await cmd("ip", ["link", "delete", names.hostInterface]).catch(() => undefined);
}

// --- cgroups -------------------------------------------------------------------------------

/** Mount points of the cgroup hierarchies (v1 controllers, name=systemd, and the unified one). */
export function cgroupMounts(): string[] {
  const mounts: string[] = [];
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    const fstype = right?.split(" ")[0];
    if (fstype === "cgroup" || fstype === "cgroup2") mounts.push(unescapeMount(left?.split(" ")[4] ?? ""));
  }
  return mounts.filter((m) => m.length > 0);
}

/**
 * Creates the kubelet's cgroup root in every hierarchy (kubelet refuses a root that does not
 * exist). A new cpuset cgroup starts with no CPUs and no memory nodes: copy the parent's.
 */
export function createCgroupRoot(cgroupRoot: string): void {
  for (const mount of cgroupMounts()) {
    const dir = path.join(mount, cgroupRoot);
    fs.mkdirSync(dir, { recursive: true });
    for (const file of ["cpuset.cpus", "cpuset.mems"]) {
      const own = path.join(dir, file);
      if (!fs.existsSync(own) || fs.readFileSync(own, "utf8").trim() !== "") continue;
      fs.writeFileSync(own, fs.readFileSync(path.join(mount, file), "utf8").trim());
    }
  }
}

function cgroupDirs(root: string): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    dirs.push(dir);
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  walk(root);
  return dirs;
}

/** Pids in the cgroup root's subtree, in any hierarchy. */
export function cgroupPids(cgroupRoot: string): number[] {
  const pids = new Set<number>();
  for (const mount of cgroupMounts()) {
    for (const dir of cgroupDirs(path.join(mount, cgroupRoot))) {
      try {
        for (const p of fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n")) {
          if (/^\d+$/.test(p)) pids.add(Number(p));
        }
      } catch {
        // removed meanwhile
      }
    }
  }
  return [...pids].sort((a, b) => a - b);
}

/**
 * Kills every process in the node's pods (SIGKILL, repeated until none is left: a process may
 * fork while it is being killed) and removes the cgroups, deepest first.
 */
export async function killCgroupRoot(cgroupRoot: string, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let killed = 0;
  for (;;) {
    const pids = cgroupPids(cgroupRoot);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // gone already
      }
    }
    if (Date.now() > deadline)
      throw new Error(`processes in cgroup ${cgroupRoot} survive SIGKILL: ${pids.join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const mount of cgroupMounts()) {
    for (const dir of cgroupDirs(path.join(mount, cgroupRoot)).reverse()) {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          fs.rmdirSync(dir);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "ENOENT") break;
          // EBUSY while the kernel finishes tearing down the last (zombie) task.
          if (attempt === 19) throw new Error(`could not remove cgroup ${dir}: ${code}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
  }
  return killed;
}

// --- mounts --------------------------------------------------------------------------------

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Mount points at or under `dir` (the host's mount namespace, which kubelet and containerd share). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  return fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => unescapeMount(line.split(" ")[4] ?? ""))
    .filter((m) => m === dir || m.startsWith(prefix));
}

/**
 * Unmounts everything under `dir`, deepest first: pod volumes (tmpfs for secrets and tokens),
 * container root file systems (overlay), sandbox /dev/shm and pod network namespaces. Lazy, so
 * a mount still referenced by a dying process cannot block `down`; its processes are dead by now.
 */
export async function unmountUnder(dir: string): Promise<number> {
  let count = 0;
  for (let round = 0; round < 5; round++) {
    const mounts = [...new Set(mountsUnder(dir))].sort((a, b) => b.length - a.length);
    if (mounts.length === 0) break;
    for (const m of mounts) {
      await cmd("umount", ["-l", m]).then(
        () => count++,
        () => undefined,
      );
    }
  }
  return count;
}
