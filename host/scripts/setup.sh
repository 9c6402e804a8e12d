#!/usr/bin/env bash
# Installs everything the project needs that is not in the repository: the npm packages
# (from the committed lockfile), the Debian tools its commands call, and the toolchain built
# from the Go module proxy. Safe to run again; a warm run takes seconds.
#
#   host/scripts/setup.sh           what `npm run up`, `npm run clusters` and `npm run bridge` need
#   host/scripts/setup.sh --test    also the tools only the tests and benchmarks use (host/scripts/test.sh)
#
# Debian 12 (bookworm) is where this runs and is tested; PostgreSQL is the release's own (the
# `postgresql` metapackage: 15 on Debian 12, 17 on Debian 13), found at /usr/lib/postgresql/<major>.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

step() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

with_test=false
for arg in "$@"; do
  case "$arg" in
    --test) with_test=true ;;
    *)
      echo "usage: host/scripts/setup.sh [--test]   (unknown argument '$arg')" >&2
      exit 2
      ;;
  esac
done

# tool:package pairs; a tool starting with / is a file that must exist (globs allowed).
# What the commands need: openssl makes the local clusters' certificates; procps/util-linux
# give ps, sysctl, flock, nsenter and taskset. A local cluster's node runs containerd with runc
# (crun refuses this machine's hybrid cgroup layout), the standard CNI plugins (bridge,
# host-local, portmap, loopback), iptables (portmap's rules) and conntrack (kube-proxy clears
# stale UDP flows with it), in a network namespace of its own (iproute2) with an nft table on
# the host (nftables); gcc and libc6-dev compile the static pause binary of the CRI sandbox
# image. The node's images copy this machine's HAProxy and PostgreSQL (host/local-clusters/images/catalog.ts),
# and the bridge's local target runs HAProxy processes, and for WireGuard connections
# wireguard-go with wg in network namespaces and a socat forwarder per connection. The local
# clusters' package registry is distribution's (docker-registry): the project's Crossplane
# packages are pushed to it and the nodes pull them (host/local-clusters/registry). The data
# services' images (host/local-clusters/images/*-image.ts) copy Redis 7.0 with redis-cli
# (redis-server, which brings redis-tools), MariaDB 10.11 with its client (mariadb-server),
# Prometheus with promtool and Alertmanager with amtool, and RabbitMQ 3.10 on Erlang 25
# (rabbitmq-server, which brings erlang-base's epmd) with the AMQP command-line clients
# (amqp-tools) and curl for its management API; none of them runs on the host (below).
runtime_pairs=(
  openssl:openssl ps:procps flock:util-linux nsenter:util-linux taskset:util-linux
  ip:iproute2 nft:nftables haproxy:haproxy
  wg:wireguard-tools wireguard-go:wireguard-go socat:socat
  '/usr/lib/postgresql/*/bin/postgres:postgresql' psql:postgresql-client
  containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins
  docker-registry:docker-registry
  iptables:iptables conntrack:conntrack gcc:gcc /usr/include/stdio.h:libc6-dev
  redis-server:redis-server redis-cli:redis-server
  /usr/sbin/mariadbd:mariadb-server mariadb:mariadb-server
  prometheus:prometheus promtool:prometheus
  prometheus-alertmanager:prometheus-alertmanager amtool:prometheus-alertmanager
  rabbitmq-server:rabbitmq-server epmd:erlang-base amqp-publish:amqp-tools curl:curl
)
# package:unit pairs of the services those packages install, which must not run on the host:
# only their binaries are wanted (copied into images), and a host MariaDB or Redis would hold
# 3306 or 6379 for good (RabbitMQ 5672, and erlang-base's epmd 4369 through its socket unit).
host_services=(redis-server:redis-server mariadb-server:mariadb prometheus:prometheus
  prometheus-alertmanager:prometheus-alertmanager rabbitmq-server:rabbitmq-server
  erlang-base:epmd.socket erlang-base:epmd)
# Only the tests: shellcheck lints these scripts (a backquote inside a double-quoted message once
# ran `npm run up` from within itself).
test_pairs=(shellcheck:shellcheck)

pairs=("${runtime_pairs[@]}")
$with_test && pairs+=("${test_pairs[@]}")

export PATH="$PATH:/usr/sbin:/sbin"
need=()
for pair in "${pairs[@]}"; do
  tool="${pair%%:*}"
  if [[ "$tool" == /* ]]; then
    # shellcheck disable=SC2086 # the glob is meant to expand
    compgen -G "$tool" >/dev/null && continue
  else
    command -v "$tool" >/dev/null && continue
  fi
  need+=("${pair#*:}")
done
if ((${#need[@]} > 0)); then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | awk '!seen[$0]++')
  step "installing Debian packages: ${need[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  # A package's maintainer scripts start its service through invoke-rc.d or deb-systemd-invoke,
  # which both ask /usr/sbin/policy-rc.d first: exit 101 ("action forbidden") while installing,
  # as Docker's Debian images do, so neither MariaDB nor Redis is started (nor the services of
  # containerd, HAProxy or docker-registry, which the project runs as processes of its own). One
  # that is already there (a container's) is left as it is.
  policy=/usr/sbin/policy-rc.d
  own_policy=false
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    own_policy=true
  fi
  install_status=0
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
    install_status=$?
  $own_policy && $SUDO rm -f "$policy"
  ((install_status == 0)) || exit "$install_status"
  # The policy stops a start, not an enable: under systemd the units of the packages just
  # installed would start at the next boot, so they are disabled (and stopped, should one run
  # anyway). A service that was on the host before is not touched.
  if [[ -d /run/systemd/system ]]; then
    for pair in "${host_services[@]}"; do
      [[ " ${need[*]} " == *" ${pair%%:*} "* ]] || continue
      unit="${pair#*:}"
      [[ $unit == *.* ]] || unit+=.service
      $SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
  fi
fi

# The project's Node.js (host/toolchain/versions.env NODE_VERSION): the machine's when it is of that
# line, else fetched from the npm registry into the toolchain cache (host/scripts/node.sh).
step "Node.js $(bash host/scripts/node.sh node --version)"

# npm packages, exactly as locked, installed by npm running on that Node.js (package.json's
# engines and .npmrc's engine-strict refuse any other); skipped when node_modules already
# matches the lockfile.
if ! cmp -s package-lock.json node_modules/.package-lock.json.klutch 2>/dev/null; then
  step "installing npm packages from package-lock.json"
  bash host/scripts/node.sh npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.package-lock.json.klutch
fi

# `npm run up` builds only what it runs; the tests build everything (the SDK generators, the YAML
# language host and Python's SDK are for the provider's tests and commands, which build them).
if $with_test; then
  step "building the toolchain (cached after the first run)"
  bash host/scripts/toolchain.sh build
else
  step "building the toolchain that npm run up needs (cached after the first run)"
  bash host/scripts/toolchain.sh build up
fi
step "ready in ${SECONDS}s"
