#!/usr/bin/env bash
# Installs everything the project needs that is not in the repository: the npm packages
# (from the committed lockfile), the Debian tools the tests call, and the toolchain built
# from the Go module proxy. Safe to run again; a warm run takes seconds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# Debian packages, only what is missing: openssl makes the local clusters' certificates;
# haproxy, postgresql, wireguard-tools/wireguard-go, iproute2 and nftables (the gateway's
# filter) are the real data plane the tests run in network namespaces; procps/util-linux give
# ps, sysctl, flock and taskset. A local cluster's node runs containerd with runc (crun refuses
# this machine's hybrid cgroup layout), the standard CNI plugins (bridge, host-local, portmap,
# loopback), iptables (portmap's rules) and conntrack (kube-proxy clears stale UDP flows with
# it); gcc and libc6-dev compile the static pause binary of the CRI sandbox image.
need=()
for pair in openssl:openssl ps:procps flock:util-linux ip:iproute2 haproxy:haproxy \
  /usr/lib/postgresql/15/bin/postgres:postgresql-15 pgbench:postgresql-client-15 \
  wg:wireguard-tools wireguard-go:wireguard-go nft:nftables taskset:util-linux \
  socat:socat \
  containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
  iptables:iptables conntrack:conntrack nsenter:util-linux gcc:gcc /usr/include/stdio.h:libc6-dev; do
  tool="${pair%%:*}"
  if [[ "$tool" == /* ]]; then [[ -e "$tool" ]] && continue; else command -v "$tool" >/dev/null && continue; fi
  export PATH="$PATH:/usr/sbin:/sbin"
  command -v "$tool" >/dev/null && continue
  need+=("${pair#*:}")
done
if ((${#need[@]} > 0)); then
  step "installing Debian packages: ${need[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# npm packages, exactly as locked; skipped when node_modules already matches the lockfile.
if ! cmp -s package-lock.json node_modules/.package-lock.json.klutch 2>/dev/null; then
  step "installing npm packages from package-lock.json"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.package-lock.json.klutch
fi

step "building the toolchain (cached after the first run)"
bash scripts/toolchain.sh build
