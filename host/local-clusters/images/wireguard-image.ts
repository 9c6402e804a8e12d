import { debianVersion, hostFiles, userEntries } from "./host-rootfs";
import type { ImageSpec } from "./oci-layout";

/**
 * `klutch.local/wireguard`: what the rendered WireGuard pods (network/wireguard/model/render-k8s.ts)
 * execute, from this machine's Debian packages (host/scripts/setup.sh installs them):
 *
 * - the tunnel: `wireguard-go` (the userspace implementation wg-quick falls back to when the
 *   kernel has no wireguard module, as on this machine), `wg` and `wg-quick` (wireguard-tools);
 *   wg-quick is a bash script that runs `ip`, `wg`, `readlink`, `stat` and `sort`;
 * - the gateway's filter: `nft` (nftables);
 * - the gateway's reload loop: `/bin/sh`, `install`, `cat`, `sha256sum`, `sleep`;
 * - the client's forwarders: `socat`, so one image serves every container of the pods.
 *
 * Runs as root: wireguard-go opens /dev/net/tun and configures the interface, nft loads the
 * filter, both with CAP_NET_ADMIN only (the pods drop every other capability).
 */
export function wireguardSpec(repository: string): ImageSpec {
  const programs = [
    "/usr/bin/wireguard-go",
    "/usr/bin/wg",
    "/usr/bin/wg-quick",
    "/usr/sbin/nft",
    "/usr/bin/socat",
    "/usr/bin/ip",
    "/usr/bin/bash",
    "/usr/bin/dash",
    "/usr/bin/readlink",
    "/usr/bin/stat",
    "/usr/bin/sort",
    "/usr/bin/cat",
    "/usr/bin/install",
    "/usr/bin/sha256sum",
    "/usr/bin/sleep",
  ];
  return {
    repository,
    // The tunnel's two packages name the image; the tag's digest part covers the rest.
    version: `${debianVersion("wireguard-go")}-tools${debianVersion("wireguard-tools")}`,
    config: {
      Entrypoint: ["/usr/bin/wg-quick"],
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    },
    entries: [
      ...hostFiles(programs.map((p) => ({ path: p }))),
      // Debian's merged /usr keeps them in /usr/bin; the shebangs and PATH name these too.
      { type: "symlink", path: "/bin/bash", target: "/usr/bin/bash" },
      { type: "symlink", path: "/bin/sh", target: "/usr/bin/dash" },
      { type: "symlink", path: "/usr/sbin/ip", target: "../bin/ip" },
      ...userEntries([]),
      // wg-quick's and the scripts' config; wireguard-go's UAPI sockets.
      { type: "dir", path: "/etc/wireguard", mode: 0o700 },
      { type: "dir", path: "/var/run/wireguard", mode: 0o755 },
    ],
  };
}
