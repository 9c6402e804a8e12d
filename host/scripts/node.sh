#!/usr/bin/env bash
# Runs a command with the project's Node.js first on PATH, and this project's node_modules/.bin
# after it, so the command and every `node` it starts (the Pulumi engine's dynamic-provider and
# policy hosts, the bridge's engine runs, test children) run on the same supported runtime.
#
#   host/scripts/node.sh ts programs/commands/pulumi.ts preview      run a TypeScript file (host/scripts/register-typescript.cjs)
#   host/scripts/node.sh kubectl get pods                   run a command
#   host/scripts/node.sh --ensure                           fetch the runtime only, print its bin dir
#   host/scripts/node.sh --compile-cache-dir                print where module compile caches go
#
# The runtime is Node.js $NODE_VERSION (host/toolchain/versions.env), the active LTS line. A machine
# whose own `node` is already of that major line uses it. Otherwise the official Linux build is
# taken from the npm registry, where the Node.js project publishes it as the package
# `node-<os>-<arch>` (the binaries the `node` package installs); `npm pack` checks the tarball
# against the registry's integrity hash. It is unpacked into the toolchain cache, beside npm and
# npx launchers that run the machine's own npm on it (the package carries only `bin/node`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../toolchain/versions.env
source "$ROOT/host/toolchain/versions.env"
CACHE="${KLUTCH_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/klutch-pulumi/toolchain}"
want_major="${NODE_VERSION%%.*}"

log() { printf '\033[1m[node]\033[0m %s\n' "$*" >&2; }
die() {
  printf '\033[31m[node] error:\033[0m %s\n' "$*" >&2
  exit 1
}

machine_node_fits() {
  local v
  v=$(command -v node >/dev/null && node -p 'process.versions.node' 2>/dev/null) || return 1
  [[ "${v%%.*}" == "$want_major" ]]
}

# The machine's npm, whose JavaScript runs on any supported Node.js.
machine_npm_cli() {
  local npm
  npm=$(command -v npm) || die "npm is required to fetch Node.js $NODE_VERSION from the registry"
  npm=$(readlink -f "$npm")
  [[ "$npm" == *.js ]] || npm="$(dirname "$npm")/../lib/node_modules/npm/bin/npm-cli.js"
  [[ -f "$npm" ]] || die "cannot find the machine's npm-cli.js (from $(command -v npm))"
  readlink -f "$npm"
}

ensure_runtime() {
  local dir="$CACHE/node-$NODE_VERSION"
  if [[ -x "$dir/bin/node" && -f "$dir/.complete" ]]; then
    echo "$dir/bin"
    return
  fi
  local os arch
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no Node.js build for $(uname -m); install Node.js $want_major yourself" ;;
  esac
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.node.lock"
  flock 8
  if [[ ! -f "$dir/.complete" ]]; then
    local pkg="node-$os-$arch@$NODE_VERSION" tmp npm_cli
    log "fetching Node.js $NODE_VERSION ($pkg from the npm registry, ~50 MB)"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2064 # expand now: the trap must remove this very directory
    trap "rm -rf '$tmp'" EXIT
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null) || die "npm pack $pkg failed"
    rm -rf "$dir" && mkdir -p "$dir"
    tar -xzf "$tmp"/*.tgz -C "$dir" --strip-components=1 package/bin package/LICENSE
    npm_cli=$(machine_npm_cli)
    local tool
    for tool in npm npx; do
      local cli="$npm_cli"
      [[ $tool == npx ]] && cli="$(dirname "$npm_cli")/npx-cli.js"
      printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$dir/bin/node" "$cli" >"$dir/bin/$tool"
      chmod 0755 "$dir/bin/$tool"
    done
    "$dir/bin/node" -e 'process.exit(0)' || die "the fetched Node.js does not run on this machine"
    echo "$pkg" >"$dir/.complete"
    log "Node.js $NODE_VERSION installed into $dir"
  fi
  flock -u 8
  echo "$dir/bin"
}

# V8's compiled code of every module, kept between runs: Node.js's module compile cache
# (NODE_COMPILE_CACHE, Node.js 22.1+), which checks each entry against its file's content and
# is skipped quietly when it cannot be used. Every process started from here inherits it: the
# program, the engine's Node.js hosts, the bridge, the tests. Loading the program takes 0.74
# times the CPU with it (farm-bench, 2026-11-27).
compile_cache_dir() { echo "${NODE_COMPILE_CACHE:-$CACHE/node-compile-cache}"; }

if [[ "${1:-}" == --compile-cache-dir ]]; then
  compile_cache_dir
  exit 0
fi
if [[ "${1:-}" == --ensure ]]; then
  if machine_node_fits; then dirname "$(readlink -f "$(command -v node)")"; else ensure_runtime; fi
  exit 0
fi
(($# > 0)) || die "usage: host/scripts/node.sh ts FILE.ts [ARGS...] | COMMAND [ARGS...] | --ensure"
if [[ "$1" == ts ]]; then
  shift
  set -- node --require "$ROOT/host/scripts/register-typescript.cjs" "$@"
fi

if ! machine_node_fits; then
  PATH="$(ensure_runtime):$PATH"
fi
export PATH="$PATH:$ROOT/node_modules/.bin"
NODE_COMPILE_CACHE="$(compile_cache_dir)"
export NODE_COMPILE_CACHE
exec "$@"
