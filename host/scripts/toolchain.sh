#!/usr/bin/env bash
# Builds the real tools the project runs against (Pulumi CLI, the Kubernetes
# provider plugin, kube-apiserver/controller-manager/kubectl, etcd, Crossplane core and CLI, CoreDNS,
# the klutch provider's SDK generator) from the Go module proxy into a version-keyed cache
# outside the clone, and a venv with Pulumi's Python SDK from PyPI.
#
#   host/scripts/toolchain.sh build     build whatever is missing (default)
#   host/scripts/toolchain.sh build up  only what `npm run up` needs; or name parts: build gen-sdk python
#   host/scripts/toolchain.sh env       print shell exports for the built tools
#   host/scripts/toolchain.sh env --local-stack
#                                  ... and for plain pulumi/kubectl on the local stack
#   host/scripts/toolchain.sh status    show what is cached and where
#
# Instead of building: a Pulumi CLI already on PATH of an accepted version (toolchain-prebuilt.sh;
# KLUTCH_PULUMI_FROM_PATH=false turns that off), and, where KLUTCH_RELEASE_MIRROR names a mirror of
# the official release archives, those, checked against their published checksums
# (toolchain-mirror.sh). Unset, nothing but the Go module proxy (and PyPI) is contacted.
#
# The cache survives between sessions and CI runs on the same machine, so a
# warm run only checks markers and takes seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../toolchain/versions.env
source "$ROOT/host/toolchain/versions.env"

CACHE="${KLUTCH_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/klutch-pulumi/toolchain}"
export GOFLAGS="-mod=mod"
export GOTOOLCHAIN=local
# This proxy serves the Pulumi modules, but the checksum database has no
# entries for some of them; their integrity comes from the proxy alone.
export GONOSUMDB="github.com/pulumi/*,github.com/crossplane/*,github.com/crossplane-contrib/*"
export CGO_ENABLED=0

log() { printf '\033[1m[toolchain]\033[0m %s\n' "$*" >&2; }
die() {
  printf '\033[31m[toolchain] error:\033[0m %s\n' "$*" >&2
  exit 1
}
# shellcheck source=toolchain-prebuilt.sh
source "$ROOT/host/scripts/toolchain-prebuilt.sh"
# shellcheck source=toolchain-mirror.sh
source "$ROOT/host/scripts/toolchain-mirror.sh"

pulumi_dir() { echo "$CACHE/pulumi-$PULUMI_VERSION"; }
k8s_provider_dir() { echo "$CACHE/pulumi-resource-kubernetes-$PULUMI_KUBERNETES_VERSION"; }
kubernetes_dir() { echo "$CACHE/kubernetes-$KUBERNETES_VERSION"; }
node_dir() { echo "$CACHE/kubernetes-node-$KUBERNETES_VERSION"; }
etcd_dir() { echo "$CACHE/etcd-$ETCD_VERSION"; }
crossplane_dir() { echo "$CACHE/crossplane-$CROSSPLANE_VERSION"; }
crossplane_legacy_dir() { echo "$CACHE/crossplane-$CROSSPLANE_LEGACY_VERSION"; }
crossplane_cli_dir() { echo "$CACHE/crossplane-cli-$CROSSPLANE_LEGACY_VERSION"; }
provider_kubernetes_dir() { echo "$CACHE/provider-kubernetes-$PROVIDER_KUBERNETES_VERSION"; }
coredns_dir() {
  local hash
  hash=$(sha256sum "$ROOT/host/toolchain/coredns/main.go" | cut -c1-12)
  echo "$CACHE/coredns-$COREDNS_VERSION-$hash"
}

is_built() { [[ -f "$1/.complete" ]]; }

# Runs a long command with its output in a log file and a heartbeat on stderr,
# so a 10-minute compile shows it is alive. On failure, shows the log's tail.
run_logged() {
  local label="$1" logfile="$2"
  shift 2
  local start=$SECONDS
  "$@" >"$logfile" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 15
    if kill -0 "$pid" 2>/dev/null; then
      local lines
      lines=$(wc -l <"$logfile" | tr -d ' ')
      log "  $label: $((SECONDS - start))s elapsed, $lines packages/lines of progress"
    fi
  done
  if ! wait "$pid"; then
    tail -n 40 "$logfile" >&2 || true
    if grep -qE '403 Forbidden|404 Not Found|dial tcp|no such host|TLS handshake' "$logfile"; then
      die "$label failed: the Go module proxy refused or could not be reached (see above; full log: $logfile). Check GOPROXY and the pinned versions in host/toolchain/versions.env."
    fi
    die "$label failed (see above; full log: $logfile)"
  fi
  log "  $label: done in $((SECONDS - start))s"
}

module_dir() {
  # Downloads a module and prints its directory in the module cache.
  local mod="$1" out
  if ! out=$(go mod download -json "$mod" 2>&1); then
    echo "$out" >&2
    die "could not download $mod from the Go module proxy ($(go env GOPROXY))"
  fi
  if grep -q '"Error"' <<<"$out"; then
    echo "$out" >&2
    die "could not download $mod from the Go module proxy ($(go env GOPROXY))"
  fi
  sed -n 's/.*"Dir": "\(.*\)",*/\1/p' <<<"$out"
}

# Prints the non-local replace directives of a go.mod, so a wrapper module
# keeps the upstream's pins (go install refuses modules with replace lines).
remote_replaces() {
  awk '
    /^replace \(/ { inblock = 1; next }
    inblock && /^\)/ { inblock = 0; next }
    inblock && /=>/ { print; next }
    /^replace / && /=>/ { sub(/^replace /, ""); print }
  ' "$1" | awk -F'=>' '{ t = $2; gsub(/^[ \t]+/, "", t); if (t !~ /^\./) print }'
}

finish() {
  local dir="$1"
  shift
  printf '%s\n' "$@" >"$dir/.complete"
  log "  installed into $dir"
}

# The official Pulumi distribution ships `pulumi-resource-pulumi-nodejs` (the host of
# dynamic providers) next to the CLI; the engine looks for it there even with ambient
# plugins ignored. A built CLI lacks it, so it is written here: it runs the dynamic provider
# of the @pulumi/pulumi that the program in the current directory resolves.
install_bundled_plugins() {
  local bin="$1/bin" plugin="$1/bin/pulumi-resource-pulumi-nodejs"
  # shellcheck disable=SC2016 # the plugin's own shell expands these when it runs
  local content='#!/bin/sh
# Host of Pulumi dynamic providers: the @pulumi/pulumi of the program being run.
script=$(node -e "process.stdout.write(require.resolve(\"@pulumi/pulumi/cmd/dynamic-provider\"))") || exit 1
exec node "$script" "$@"'
  if [[ ! -f "$plugin" || "$(cat "$plugin")" != "$content" ]]; then
    mkdir -p "$bin"
    printf '%s\n' "$content" >"$plugin.tmp" && chmod 0755 "$plugin.tmp" && mv "$plugin.tmp" "$plugin"
    log "  installed the dynamic provider host next to the CLI ($plugin)"
  fi
}

# --- Policy packs ----------------------------------------------------------------------------
# No analyzer host is written here since pulumi 3.276.0: that CLI starts a policy pack directory
# only through `pulumi-language-nodejs`, which the module proxy refuses, and no longer falls back
# to `pulumi-analyzer-policy-nodejs`; the runner hands it each pack as a launcher instead
# (host/automation/policy-host.ts says why and how).

build_pulumi() {
  local dir
  dir=$(pulumi_dir)
  if is_built "$dir"; then
    log "pulumi $PULUMI_VERSION: cached ($dir)"
    install_bundled_plugins "$dir"
    return
  fi
  log "pulumi $PULUMI_VERSION: building the CLI from github.com/pulumi/pulumi/pkg/v3 (cold: ~10-15 min on 2 cores)"
  local work="$dir/src"
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  local pkgdir
  pkgdir=$(module_dir "github.com/pulumi/pulumi/pkg/v3@v$PULUMI_VERSION")
  {
    echo "module klutch.local/toolchain/pulumi"
    echo
    echo "go $(awk '/^go /{print $2}' "$pkgdir/go.mod")"
    echo
    echo "require ("
    echo "	github.com/pulumi/pulumi/pkg/v3 v$PULUMI_VERSION"
    echo "	github.com/pulumi/pulumi/sdk/v3 v$PULUMI_VERSION"
    echo ")"
    remote_replaces "$pkgdir/go.mod" | sed 's/^[ \t]*/replace /'
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "pulumi: resolving modules" "$dir/resolve.log" go mod download -x github.com/pulumi/pulumi/pkg/v3
    run_logged "pulumi: compiling" "$dir/build.log" go build -v -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION" \
      -o "$dir/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  )
  install_bundled_plugins "$dir"
  finish "$dir" "pulumi v$PULUMI_VERSION"
}

build_k8s_provider() {
  local dir
  dir=$(k8s_provider_dir)
  if is_built "$dir"; then
    log "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: cached ($dir)"
    return
  fi
  log "pulumi-resource-kubernetes $PULUMI_KUBERNETES_VERSION: building (cold: ~10 min)"
  rm -rf "$dir" && mkdir -p "$dir/bin"
  local moddir work="$dir/src"
  moddir=$(module_dir "github.com/pulumi/pulumi-kubernetes/provider/v4@$PULUMI_KUBERNETES_MODULE_VERSION")
  # The provider embeds a versioned schema that its own `go generate` step
  # writes next to main.go, so it is built from a writable copy.
  cp -r "$moddir" "$work" && chmod -R u+w "$work"
  (
    cd "$work"
    go mod edit -dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4 \
      -require="github.com/pulumi/pulumi-kubernetes/sdk/v4@v$PULUMI_KUBERNETES_VERSION"
    run_logged "pulumi-resource-kubernetes: generating the embedded schema" "$dir/generate.log" \
      env VERSION="$PULUMI_KUBERNETES_VERSION" go generate ./cmd/pulumi-resource-kubernetes
    run_logged "pulumi-resource-kubernetes: compiling" "$dir/build.log" go build -v -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$PULUMI_KUBERNETES_VERSION" \
      -o "$dir/bin/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
  )
  rm -rf "$work"
  finish "$dir" "pulumi-resource-kubernetes v$PULUMI_KUBERNETES_VERSION ($PULUMI_KUBERNETES_MODULE_VERSION)"
}

build_kubernetes() {
  local dir
  dir=$(kubernetes_dir)
  if is_built "$dir"; then
    log "kubernetes $KUBERNETES_VERSION: cached ($dir)"
    return
  fi
  log "kubernetes $KUBERNETES_VERSION: building kube-apiserver, kube-controller-manager, kubectl (cold: ~10 min)"
  local work="$dir/src"
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  kubernetes_module "$work"
  (
    cd "$work"
    run_logged "kubernetes: resolving modules" "$dir/resolve.log" go mod download -x k8s.io/kubernetes
    run_logged "kubernetes: compiling" "$dir/build.log" go build -v -trimpath -ldflags "$(kubernetes_ldflags)" -o "$dir/bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
  )
  finish "$dir" "kube-apiserver, kube-controller-manager, kubectl v$KUBERNETES_VERSION"
}

# Writes the wrapper module that builds commands of k8s.io/kubernetes (go install refuses a
# module whose go.mod has replace lines, and k8s.io/kubernetes replaces its staging modules).
kubernetes_module() {
  local work="$1" kdir staging="v0.${KUBERNETES_VERSION#1.}"
  kdir=$(module_dir "k8s.io/kubernetes@v$KUBERNETES_VERSION")
  {
    echo "module klutch.local/toolchain/kubernetes"
    echo
    echo "go $(awk '/^go /{print $2}' "$kdir/go.mod")"
    echo
    echo "require k8s.io/kubernetes v$KUBERNETES_VERSION"
    echo
    echo "replace ("
    # Every staging module is replaced by its published v0.x release.
    grep -oE 'k8s.io/[a-z0-9-]+ => \./staging/src/k8s.io/[a-z0-9-]+' "$kdir/go.mod" |
      awk -v v="$staging" '{ print "\t" $1 " => " $1 " " v }'
    echo ")"
  } >"$work/go.mod"
}

# The version stamps `kubectl version` and the components report.
kubernetes_ldflags() {
  local vpkg=k8s.io/component-base/version cpkg=k8s.io/client-go/pkg/version ldflags="-s -w" minor
  minor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")
  for p in $vpkg $cpkg; do
    ldflags="$ldflags -X $p.gitVersion=v$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ldflags"
}

# What a local node runs besides containerd (a Debian package): kubelet, kube-proxy and
# kube-scheduler from the same k8s.io/kubernetes module as the API server, and the CRI sandbox
# ("pause") process compiled from that module's own build/pause/linux/pause.c. A cache of its
# own, so clusters without nodes never wait for it and the API server's cache stays valid.
# The wrapper module's go.sum starts empty; GOFLAGS=-mod=mod (above) lets go build add the
# kubelet's extra dependencies to it.
build_node() {
  local dir
  dir=$(node_dir)
  if is_built "$dir"; then
    log "kubernetes node $KUBERNETES_VERSION: cached ($dir)"
    return
  fi
  log "kubernetes node $KUBERNETES_VERSION: building kubelet, kube-proxy, kube-scheduler, pause (cold: ~10 min, ~3 min each after the API server)"
  need_gcc
  local work="$dir/src"
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  kubernetes_module "$work"
  (
    cd "$work"
    run_logged "kubernetes node: compiling" "$dir/build.log" go build -v -trimpath -ldflags "$(kubernetes_ldflags)" -o "$dir/bin/" \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler
  )
  build_pause "$dir"
  rm -rf "$work"
  local pause_version
  pause_version=$(cat "$dir/pause.version")
  finish "$dir" "kubelet, kube-proxy, kube-scheduler v$KUBERNETES_VERSION, pause $pause_version"
}

# The CRI sandbox process into <node cache folder>/bin/pause, compiled from k8s.io/kubernetes's
# build/pause/linux/pause.c (a release mirror has no such file: upstream ships it only as an image).
need_gcc() { command -v gcc >/dev/null || die "gcc is required to build the pause binary (apt-get install gcc libc6-dev)"; }
build_pause() {
  local dir="$1" kdir
  need_gcc
  kdir=$(module_dir "k8s.io/kubernetes@v$KUBERNETES_VERSION")
  # Static, so the pause image is this one file; VERSION is the tag upstream's Makefile gives it.
  local pause_version
  pause_version=$(awk -F' *[:?]?= *' '$1 == "TAG" { print $2; exit }' "$kdir/build/pause/Makefile")
  [[ -n "$pause_version" ]] || die "no TAG in $kdir/build/pause/Makefile"
  gcc -Os -Wall -Werror -static -DVERSION="v$pause_version-klutch" -o "$dir/bin/pause" "$kdir/build/pause/linux/pause.c" ||
    die "compiling pause.c failed"
  strip "$dir/bin/pause"
  echo "$pause_version" >"$dir/pause.version"
}

build_etcd() {
  local dir
  dir=$(etcd_dir)
  if is_built "$dir"; then
    log "etcd $ETCD_VERSION: cached ($dir)"
    return
  fi
  log "etcd $ETCD_VERSION: building (cold: ~2 min)"
  local work="$dir/src" patch
  patch="${ETCD_VERSION##*.}"
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  local edir
  edir=$(module_dir "go.etcd.io/etcd/server/v3@v$ETCD_VERSION")
  {
    echo "module klutch.local/toolchain/etcd"
    echo
    echo "go $(awk '/^go /{print $2}' "$edir/go.mod")"
    echo
    echo "require go.etcd.io/etcd/server/v3 v$ETCD_VERSION"
    echo
    echo "replace ("
    # The sibling modules are released in lockstep; client/v2 carries v2.305.x.
    grep -oE 'go.etcd.io/etcd/[a-z0-9/]+ => \.\./' "$edir/go.mod" | awk '{print $1}' |
      while read -r m; do
        if [[ "$m" == */v2 ]]; then echo "	$m => $m v2.305.$patch"; else echo "	$m => $m v$ETCD_VERSION"; fi
      done
    echo ")"
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "etcd: compiling" "$dir/build.log" go build -v -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
  )
  finish "$dir" "etcd v$ETCD_VERSION"
}

# Builds one command of a Crossplane module into <cache dir>/bin through a wrapper module (named
# klutch.local/toolchain/<wrapper>) that carries the module's own replaces, stamping the version
# into the package that holds it (internal/version in 1.x, crossplane-runtime/v2's pkg/version
# since v2.0). Modules after the 8th argument are required beside it at the same version.
# Args: cache dir, wrapper name, cmd/<name> to build, binary name, module, version, version package.
build_crossplane_command() {
  local dir="$1" wrapper="$2" cmd="$3" bin="$4" module="$5" version="$6" version_pkg="$7" cdir
  shift 7
  local work="$dir/src"
  mkdir -p "$work" "$dir/bin"
  cdir=$(module_dir "$module@v$version")
  {
    echo "module klutch.local/toolchain/$wrapper"
    echo
    echo "go $(awk '/^go /{print $2}' "$cdir/go.mod")"
    echo
    echo "require ("
    for required in "$module" "$@"; do echo "	$required v$version"; done
    echo ")"
    remote_replaces "$cdir/go.mod" | sed 's/^[ \t]*/replace /'
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "$wrapper: compiling cmd/$cmd" "$dir/build.log" go build -v -trimpath \
      -ldflags "-s -w -X $version_pkg.version=v$version" -o "$dir/bin/$bin" "$module/cmd/$cmd"
  )
  rm -rf "$work"
}

# A Crossplane core: the binary `crossplane` and the module's cluster/ folder (chart, CRDs and
# webhook configurations) copied beside it. Args as build_crossplane_command's from the 5th on.
build_crossplane_core() {
  local dir="$1" module="$2" version="$3"
  if is_built "$dir"; then
    log "crossplane $version: cached ($dir)"
    return
  fi
  log "crossplane $version: building core (cold: ~8 min)"
  rm -rf "$dir"
  build_crossplane_command "$dir" crossplane crossplane crossplane "${@:2}"
  cp -r "$(module_dir "$module@v$version")/cluster" "$dir/cluster" && chmod -R u+w "$dir/cluster"
  finish "$dir" "crossplane v$version"
}

# Crossplane v2 core (CROSSPLANE_VERSION), on PATH as `crossplane`. The module replaces its apis/v2
# by its own folder (`=> ./apis`), which a wrapper cannot carry; without it the apis/v2 the module
# requires (v2.3.4 for core v2.4.0) is used and lacks what the core calls (RuntimeActive), so the
# wrapper requires apis/v2 at the core's own version.
build_crossplane() {
  build_crossplane_core "$(crossplane_dir)" github.com/crossplane/crossplane/v2 "$CROSSPLANE_VERSION" \
    github.com/crossplane/crossplane-runtime/v2/pkg/version github.com/crossplane/crossplane/apis/v2
}

# Crossplane 1.20 core (CROSSPLANE_LEGACY_VERSION), kept for environments on upstream Klutch's
# supported line and for a core run as a process (crossplane.runLocally), which on v2 needs the
# External package runtime this project does not drive yet (docs/versions.md). Not on PATH:
# KLUTCH_CROSSPLANE_LEGACY names its binary and KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR its chart and CRDs.
build_crossplane_legacy() {
  build_crossplane_core "$(crossplane_legacy_dir)" github.com/crossplane/crossplane \
    "$CROSSPLANE_LEGACY_VERSION" github.com/crossplane/crossplane/internal/version
}

# The `crossplane` CLI (cmd/crank: render, xpkg build/push, beta convert) of the 1.20 module, in a
# cache entry of its own so the core's stays valid; it is built after that core, whose packages it
# finds in the shared Go build cache. The CLI left the v2 core module in v2.3 (docs/versions.md);
# packages it builds install on a v2 core as on 1.20.
# The binary is named `crank` (upstream's name for the command's source) and is not put on
# PATH (KLUTCH_CROSSPLANE_CLI names it), so it never shadows the core binary `crossplane`.
build_crossplane_cli() {
  local dir
  dir=$(crossplane_cli_dir)
  if is_built "$dir"; then
    log "crossplane CLI $CROSSPLANE_LEGACY_VERSION: cached ($dir)"
    return
  fi
  log "crossplane CLI $CROSSPLANE_LEGACY_VERSION: building cmd/crank (cold: ~1 min after the 1.20 core)"
  rm -rf "$dir"
  build_crossplane_command "$dir" crossplane-cli crank crank github.com/crossplane/crossplane \
    "$CROSSPLANE_LEGACY_VERSION" github.com/crossplane/crossplane/internal/version
  finish "$dir" "crossplane CLI (crank) v$CROSSPLANE_LEGACY_VERSION"
}

# provider-kubernetes (cmd/provider) at the pinned version, static, through a wrapper module that
# requires it (so its go.mod's requires hold) and moves one dependency the module proxy refuses:
# v1.3.1 requires github.com/nebius/gosdk v0.2.28 (the Nebius cloud credentials of
# pkg/kube/client/nebius), whose zip is refused (403, 2026-12-03); v0.2.29, the next patch, is
# served. Its package root (package/: crossplane.yaml and the CRDs) is kept next to the binary for
# `crossplane xpkg build`.
PROVIDER_KUBERNETES_REPLACES=("github.com/nebius/gosdk => github.com/nebius/gosdk v0.2.29")
build_provider_kubernetes() {
  local dir pdir work
  dir=$(provider_kubernetes_dir)
  if is_built "$dir"; then
    log "provider-kubernetes $PROVIDER_KUBERNETES_VERSION: cached ($dir)"
    return
  fi
  log "provider-kubernetes $PROVIDER_KUBERNETES_VERSION: building (cold: ~3 min)"
  work="$dir/src"
  rm -rf "$dir" && mkdir -p "$dir/bin" "$work"
  pdir=$(module_dir "github.com/crossplane-contrib/provider-kubernetes@v$PROVIDER_KUBERNETES_VERSION")
  {
    echo "module klutch.local/toolchain/provider-kubernetes"
    echo
    echo "go $(awk '/^go /{print $2}' "$pdir/go.mod")"
    echo
    echo "require github.com/crossplane-contrib/provider-kubernetes v$PROVIDER_KUBERNETES_VERSION"
    remote_replaces "$pdir/go.mod" | sed 's/^[ \t]*/replace /'
    printf 'replace %s\n' "${PROVIDER_KUBERNETES_REPLACES[@]}"
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "provider-kubernetes: compiling cmd/provider" "$dir/build.log" go build -v -trimpath \
      -ldflags "-s -w" -o "$dir/bin/provider" github.com/crossplane-contrib/provider-kubernetes/cmd/provider
  )
  cp -r "$pdir/package" "$dir/package" && chmod -R u+w "$dir/package"
  rm -rf "$work"
  finish "$dir" "provider-kubernetes v$PROVIDER_KUBERNETES_VERSION"
}

# CoreDNS for the local nodes' cluster DNS image (host/local-clusters/images/catalog.ts): the
# command in host/toolchain/coredns (upstream's main with only the plugins used) in a wrapper module
# that requires the pinned release and keeps its remote replaces. A static binary (CGO off).
build_coredns() {
  local dir cdir
  dir=$(coredns_dir)
  if is_built "$dir"; then
    log "coredns $COREDNS_VERSION: cached ($dir)"
    return
  fi
  log "coredns $COREDNS_VERSION: building (cold: ~2 min)"
  local work="$dir/src"
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  cdir=$(module_dir "github.com/coredns/coredns@v$COREDNS_VERSION")
  cp "$ROOT/host/toolchain/coredns/main.go" "$work/"
  {
    echo "module klutch.local/toolchain/coredns"
    echo
    echo "go $(awk '/^go /{print $2}' "$cdir/go.mod")"
    echo
    echo "require github.com/coredns/coredns v$COREDNS_VERSION"
    remote_replaces "$cdir/go.mod" | sed 's/^[ \t]*/replace /'
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "coredns: compiling" "$dir/build.log" go build -v -trimpath -ldflags "-s -w" \
      -o "$dir/bin/coredns" .
  )
  finish "$dir" "coredns v$COREDNS_VERSION (cache, errors, forward, health, hosts, kubernetes, loadbalance, ready, reload)"
}

# --- The Pulumi YAML language host ----------------------------------------------------------
# `pulumi up` on a YAML program (runtime: yaml) runs the language plugin `pulumi-language-yaml`.
# Facts from github.com/pulumi/pulumi/sdk/v3@v3.248.0 (unchanged at v3.259.0 and v3.276.0), go/common/workspace/plugins.go
# (IsPluginBundled, getPluginInfoAndPath): "yaml" is a bundled language plugin, looked up next to
# the running `pulumi` (and on PATH only without PULUMI_IGNORE_AMBIENT_PLUGINS, which the project
# sets). So it is built into a cache entry of its own, from the module github.com/pulumi/pulumi-yaml
# (cmd/pulumi-language-yaml, the command the official distribution ships) at a version the module
# proxy serves, and linked next to the CLI. v1.30.0 (pulumi/pkg and sdk v3.224.0): v1.19.1 reads
# stack config only from RunRequest.configPropertyMap (pkg/server/server.go), which the 3.248
# engine no longer sends (sdk go/common/resource/plugin/langruntime_plugin.go, Run), so every
# `${config}` of a program was "not found"; v1.30.0 reads RunRequest.config.
PULUMI_YAML_VERSION="${PULUMI_YAML_VERSION:-1.30.0}"
pulumi_yaml_dir() { echo "$CACHE/pulumi-language-yaml-$PULUMI_YAML_VERSION"; }

link_yaml_host() {
  local target link
  target="$(pulumi_yaml_dir)/bin/pulumi-language-yaml"
  link="$(pulumi_dir)/bin/pulumi-language-yaml"
  if [[ "$(readlink "$link" 2>/dev/null)" != "$target" ]]; then
    mkdir -p "$(dirname "$link")"
    ln -sfn "$target" "$link"
    log "  linked the YAML language host next to the CLI ($link)"
  fi
}

build_pulumi_yaml() {
  local dir
  dir=$(pulumi_yaml_dir)
  if is_built "$dir"; then
    log "pulumi-language-yaml $PULUMI_YAML_VERSION: cached ($dir)"
    link_yaml_host
    return
  fi
  log "pulumi-language-yaml $PULUMI_YAML_VERSION: building (cold: ~10 min, ~1 min after the CLI)"
  local work="$dir/src" ydir
  rm -rf "$dir" && mkdir -p "$work" "$dir/bin"
  ydir=$(module_dir "github.com/pulumi/pulumi-yaml@v$PULUMI_YAML_VERSION")
  {
    echo "module klutch.local/toolchain/pulumi-yaml"
    echo
    echo "go $(awk '/^go /{print $2}' "$ydir/go.mod")"
    echo
    echo "require github.com/pulumi/pulumi-yaml v$PULUMI_YAML_VERSION"
    remote_replaces "$ydir/go.mod" | sed 's/^[ \t]*/replace /'
  } >"$work/go.mod"
  (
    cd "$work"
    run_logged "pulumi-language-yaml: compiling" "$dir/build.log" go build -v -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$PULUMI_YAML_VERSION" \
      -o "$dir/bin/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml
  )
  rm -rf "$work"
  finish "$dir" "pulumi-language-yaml v$PULUMI_YAML_VERSION"
  link_yaml_host
}

# --- The SDK generator of the klutch provider ------------------------------------------------
# `npm run provider:sdks` writes sdk/<language> from programs/klutch-provider/schema.json with
# host/toolchain/gen-sdk: Pulumi's own code generators (codegen/nodejs, codegen/python, codegen/go of
# github.com/pulumi/pulumi/pkg/v3, the module the CLI is built from) called the way the language
# plugins call them (main.go says where from). `pulumi package gen-sdk` needs those plugins, which
# the module proxy refuses. Two binaries from one source: klutch-gen-sdk at PULUMI_VERSION, and
# klutch-gen-sdk-dotnet (build tag `dotnet`) at PULUMI_DOTNET_CODEGEN_VERSION, the newest pkg/v3
# that still carries codegen/dotnet (dotnet.go says why). The cache key holds both versions and a
# hash of the sources, so editing them rebuilds. go.mod is written here, like the CLI's wrapper
# module.
gen_sdk_dir() {
  local hash
  hash=$(cat "$ROOT"/host/toolchain/gen-sdk/*.go | sha256sum | cut -c1-12)
  echo "$CACHE/klutch-gen-sdk-$PULUMI_VERSION-dotnet-$PULUMI_DOTNET_CODEGEN_VERSION-$hash"
}

# gen_sdk_module <work dir> <module name> <pkg/v3 version>: the generator's wrapper module.
gen_sdk_module() {
  local work="$1" name="$2" version="$3" pkgdir
  pkgdir=$(module_dir "github.com/pulumi/pulumi/pkg/v3@v$version")
  mkdir -p "$work"
  cp "$ROOT"/host/toolchain/gen-sdk/*.go "$work/"
  {
    echo "module klutch.local/toolchain/$name"
    echo
    echo "go $(awk '/^go /{print $2}' "$pkgdir/go.mod")"
    echo
    echo "require ("
    echo "	github.com/pulumi/pulumi/pkg/v3 v$version"
    echo "	github.com/pulumi/pulumi/sdk/v3 v$version"
    echo ")"
    remote_replaces "$pkgdir/go.mod" | sed 's/^[ \t]*/replace /'
  } >"$work/go.mod"
}

build_gen_sdk() {
  local dir
  dir=$(gen_sdk_dir)
  if is_built "$dir"; then
    log "klutch-gen-sdk (codegen of pulumi $PULUMI_VERSION, .NET of $PULUMI_DOTNET_CODEGEN_VERSION): cached ($dir)"
    return
  fi
  log "klutch-gen-sdk (codegen of pulumi $PULUMI_VERSION): building (~15 s after the CLI, whose packages the Go build cache holds)"
  rm -rf "$dir" && mkdir -p "$dir/bin"
  gen_sdk_module "$dir/src" gen-sdk "$PULUMI_VERSION"
  (
    cd "$dir/src"
    # The flags of the CLI's build above, so the shared Go build cache serves its packages.
    run_logged "klutch-gen-sdk: compiling" "$dir/build.log" go build -v -trimpath -ldflags "-s -w" \
      -o "$dir/bin/klutch-gen-sdk" .
  )
  log "klutch-gen-sdk-dotnet (codegen/dotnet of pulumi $PULUMI_DOTNET_CODEGEN_VERSION): building (cold: ~3 min)"
  gen_sdk_module "$dir/src-dotnet" gen-sdk-dotnet "$PULUMI_DOTNET_CODEGEN_VERSION"
  (
    cd "$dir/src-dotnet"
    run_logged "klutch-gen-sdk-dotnet: compiling" "$dir/build-dotnet.log" go build -v -trimpath -tags dotnet \
      -ldflags "-s -w" -o "$dir/bin/klutch-gen-sdk-dotnet" .
  )
  finish "$dir" "klutch-gen-sdk (pulumi codegen v$PULUMI_VERSION, .NET v$PULUMI_DOTNET_CODEGEN_VERSION)"
}

# --- Pulumi's Python SDK -----------------------------------------------------------------------
# The klutch provider's Python SDK (sdk/python) is run in its test through Pulumi's
# Python Automation API, which hosts the program's language runtime itself (no
# pulumi-language-python plugin, which the module proxy refuses). A venv in the cache holds
# pulumi==PULUMI_PYTHON_VERSION from PyPI with the exact versions of host/toolchain/python-constraints.txt
# (pulumi's dependencies, the SDK's runtime dependencies and its build backend); the cache key
# holds the Python version and a hash of that file. PULUMI_PYTHON_VERSION is not PULUMI_VERSION:
# PyPI lags the module proxy and npm (versions.env says by how much), and an older SDK runs on the
# newer engine.
python_dir() {
  local py hash
  py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)
  hash=$(sha256sum "$ROOT/host/toolchain/python-constraints.txt" | cut -c1-12)
  echo "$CACHE/python-pulumi-$PULUMI_PYTHON_VERSION-py$py-$hash"
}

build_python() {
  local dir
  dir=$(python_dir)
  if is_built "$dir"; then
    log "pulumi $PULUMI_PYTHON_VERSION for Python: cached ($dir)"
    return
  fi
  command -v python3 >/dev/null || die "python3 is required for the Python SDK's venv (apt-get install python3 python3-venv)"
  log "pulumi $PULUMI_PYTHON_VERSION for Python: installing from PyPI into a venv (~20 s)"
  rm -rf "$dir" && mkdir -p "$dir"
  python3 -m venv "$dir/venv" || die "python3 -m venv failed (apt-get install python3-venv)"
  run_logged "pulumi for Python: pip install" "$dir/install.log" "$dir/venv/bin/pip" install \
    --disable-pip-version-check --no-input -c "$ROOT/host/toolchain/python-constraints.txt" \
    "pulumi==$PULUMI_PYTHON_VERSION" semver setuptools
  # Every package pinned: one pip added that the constraints do not name fails the build.
  local unpinned
  "$dir/venv/bin/pip" freeze --all --disable-pip-version-check >"$dir/freeze.txt"
  unpinned=$(grep -viE "^(pulumi|pip)==" "$dir/freeze.txt" | grep -vixFf <(grep -v '^#' "$ROOT/host/toolchain/python-constraints.txt") || true)
  [[ -z "$unpinned" ]] || die "pip installed packages host/toolchain/python-constraints.txt does not pin: ${unpinned//$'\n'/ }; add them"
  finish "$dir" "pulumi v$PULUMI_PYTHON_VERSION for Python $("$dir/venv/bin/python" --version 2>&1 | cut -d' ' -f2)"
}

check_versions() {
  command -v go >/dev/null || die "Go is required to build the toolchain (the machine's Go, or apt-get install golang)"
  local declared
  declared=$(node -p "require('$ROOT/package.json').dependencies['@pulumi/kubernetes']" 2>/dev/null || echo "")
  if [[ -n "$declared" && "$declared" != "$PULUMI_KUBERNETES_VERSION" ]]; then
    die "package.json pins @pulumi/kubernetes $declared but host/toolchain/versions.env builds $PULUMI_KUBERNETES_VERSION; make them equal"
  fi
  declared=$(node -p "require('$ROOT/package.json').dependencies['@pulumi/pulumi']" 2>/dev/null || echo "")
  if [[ -n "$declared" && "$declared" != "$PULUMI_VERSION" ]]; then
    die "package.json pins @pulumi/pulumi $declared but host/toolchain/versions.env builds the Pulumi CLI $PULUMI_VERSION; make them equal"
  fi
  # The Python SDK may lag the engine, never lead it (versions.env).
  if [[ "$(printf '%s\n' "$PULUMI_PYTHON_VERSION" "$PULUMI_VERSION" | sort -V | tail -n1)" != "$PULUMI_VERSION" ]]; then
    die "host/toolchain/versions.env pins Pulumi's Python SDK $PULUMI_PYTHON_VERSION, newer than the CLI $PULUMI_VERSION; an SDK must not be newer than its engine"
  fi
}

# --- Plain `pulumi` and `kubectl` on the local stack -----------------------------------------
# `env --local-stack` adds to the toolchain's exports what the real CLI needs to work on the
# project's `local` stack the way `npm run pulumi` does (host/automation/pulumi-runner.ts, pulumiEnv): the
# file backend and plugin home inside the project, no update checks or plugin downloads, the
# local stack's passphrase, and KUBECONFIG listing the local clusters' kubeconfigs (the control
# plane's context first, so it is current). PULUMI_BACKEND_URL, PULUMI_HOME and KLUTCH_LOCAL_DIR
# already set are kept. The passphrase is not printed: it is written to
# .pulumi/local-stack.passphrase (mode 0600, gitignored) and only PULUMI_CONFIG_PASSPHRASE_FILE is
# exported, so the output can be logged; `npm run pulumi` refuses that file for any other stack.
local_passphrase_file() { echo "$ROOT/.pulumi/local-stack.passphrase"; }

print_local_stack_env() {
  local passphrase file dir cp kubeconfigs=() k
  passphrase=$(sed -n 's/^export const LOCAL_STACK_PASSPHRASE = "\(.*\)";$/\1/p' "$ROOT/host/automation/pulumi-runner.ts")
  [[ -n "$passphrase" ]] || die "no LOCAL_STACK_PASSPHRASE in host/automation/pulumi-runner.ts"
  file=$(local_passphrase_file)
  mkdir -p "$(dirname "$file")"
  if [[ ! -f "$file" || "$(cat "$file")" != "$passphrase" ]]; then
    (umask 077 && printf '%s' "$passphrase" >"$file.tmp" && mv "$file.tmp" "$file")
  fi
  local backend="${PULUMI_BACKEND_URL:-file://$ROOT/.pulumi/state}"
  # The file backend's directory must exist before the CLI opens it (`pulumi stack ls`).
  [[ "$backend" != file://* ]] || mkdir -p "${backend#file://}"
  echo "export PULUMI_BACKEND_URL=\"$backend\""
  echo "export PULUMI_HOME=\"${PULUMI_HOME:-$ROOT/.pulumi/home}\""
  echo "export PULUMI_IGNORE_AMBIENT_PLUGINS=true"
  echo "unset PULUMI_CONFIG_PASSPHRASE"
  echo "export PULUMI_CONFIG_PASSPHRASE_FILE=\"$file\""
  dir="${KLUTCH_LOCAL_DIR:-$ROOT/.klutch/local}"
  [[ "$dir" == /* ]] || dir="$ROOT/$dir"
  cp=$(awk '/^  klutch:controlPlane:/ { inside = 1; next } inside && /^    name:/ { print $2; exit }' \
    "$ROOT/stacks/Pulumi.local.yaml")
  [[ -n "$cp" && -f "$dir/$cp/kubeconfig" ]] && kubeconfigs+=("$dir/$cp/kubeconfig")
  for k in "$dir"/*/kubeconfig; do
    [[ -f "$k" && "$k" != "$dir/$cp/kubeconfig" ]] && kubeconfigs+=("$k")
  done
  if ((${#kubeconfigs[@]} > 0)); then
    echo "export KUBECONFIG=\"$(
      IFS=:
      echo "${kubeconfigs[*]}"
    )\""
  else
    echo "# no local cluster kubeconfig under $dir yet: start them with \`npm run clusters -- up\`"
  fi
}

print_env() {
  echo "export KLUTCH_TOOLCHAIN_CACHE=\"$CACHE\""
  echo "export PATH=\"$(pulumi_dir)/bin:$(k8s_provider_dir)/bin:$(kubernetes_dir)/bin:$(node_dir)/bin:$(etcd_dir)/bin:$(crossplane_dir)/bin:$(coredns_dir)/bin:\$PATH\""
  echo "export KLUTCH_CROSSPLANE_CLUSTER_DIR=\"$(crossplane_dir)/cluster\""
  echo "export KLUTCH_CROSSPLANE_LEGACY=\"$(crossplane_legacy_dir)/bin/crossplane\""
  echo "export KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR=\"$(crossplane_legacy_dir)/cluster\""
  echo "export KLUTCH_CROSSPLANE_CLI=\"$(crossplane_cli_dir)/bin/crank\""
  echo "export KLUTCH_PROVIDER_KUBERNETES_DIR=\"$(provider_kubernetes_dir)\""
  echo "export KLUTCH_GEN_SDK=\"$(gen_sdk_dir)/bin/klutch-gen-sdk\""
  echo "export KLUTCH_GEN_SDK_DOTNET=\"$(gen_sdk_dir)/bin/klutch-gen-sdk-dotnet\""
  echo "export KLUTCH_PULUMI_PYTHON=\"$(python_dir)/venv/bin/python\""
  echo "export PULUMI_SKIP_UPDATE_CHECK=true"
  echo "export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true"
}

status() {
  local d
  for d in "$(etcd_dir)" "$(kubernetes_dir)" "$(node_dir)" "$(pulumi_dir)" "$(k8s_provider_dir)" "$(crossplane_dir)" "$(crossplane_legacy_dir)" "$(crossplane_cli_dir)" "$(provider_kubernetes_dir)" "$(coredns_dir)" "$(pulumi_yaml_dir)" "$(gen_sdk_dir)" "$(python_dir)"; do
    if is_built "$d"; then
      printf '  %-64s %s\n' "$d" "$(head -1 "$d/.complete")"
    else
      printf '  %-64s %s\n' "$d" "missing"
    fi
  done
  if ! is_built "$(pulumi_dir)" && pulumi_on_path; then printf '  %-64s %s\n' "$PULUMI_ON_PATH" "pulumi on PATH, used as it is"; fi
}

main() {
  local cmd="${1:-build}"
  case "$cmd" in
    build)
      check_versions
      mkdir -p "$CACHE"
      local start=$SECONDS
      # One build at a time: the tests and the README's command may both call this.
      exec 9>"$CACHE/.lock"
      flock 9
      # What to build: everything (the tests), `up` (what `npm run up`, `npm run clusters` and
      # `npm run bridge` run: no SDK generators, YAML language host or Python SDK), or named parts.
      shift
      local -a parts=("${@:-all}")
      [[ "${parts[*]}" != up ]] ||
        parts=(etcd kubernetes node pulumi pulumi-kubernetes crossplane crossplane-legacy crossplane-cli provider-kubernetes coredns)
      want() { [[ " ${parts[*]} " == *" all "* || " ${parts[*]} " == *" $1 "* ]]; }
      # Each part: its cache folder and its cold build on this 2-core machine, in minutes (the
      # go build of one part already keeps both cores busy, so parts are built one after another).
      local -A dir_of=([etcd]=etcd_dir [kubernetes]=kubernetes_dir [node]=node_dir [pulumi]=pulumi_dir
        [pulumi-kubernetes]=k8s_provider_dir [crossplane]=crossplane_dir [crossplane-legacy]=crossplane_legacy_dir
        [crossplane-cli]=crossplane_cli_dir
        [provider-kubernetes]=provider_kubernetes_dir [coredns]=coredns_dir [pulumi-yaml]=pulumi_yaml_dir
        [gen-sdk]=gen_sdk_dir [python]=python_dir)
      local -A minutes_of=([etcd]=1 [kubernetes]=6 [node]=1 [pulumi]=6 [pulumi-kubernetes]=10 [crossplane]=3
        [crossplane-legacy]=3 [crossplane-cli]=1 [provider-kubernetes]=2 [coredns]=1 [pulumi-yaml]=2 [gen-sdk]=4 [python]=1)
      local -a order=(etcd kubernetes node pulumi pulumi-kubernetes crossplane crossplane-legacy crossplane-cli
        provider-kubernetes coredns pulumi-yaml gen-sdk python)
      local -a todo=()
      local part left=0 done_parts=0
      for part in "${order[@]}"; do
        if want "$part" && ! is_built "$(${dir_of[$part]})" && ! { [[ $part == pulumi ]] && pulumi_on_path; }; then
          todo+=("$part")
          # A part a mirror serves takes seconds, if the mirror has it.
          ! mirror_on || ! mirror_version_of "$part" >/dev/null || minutes_of[$part]=0
          left=$((left + ${minutes_of[$part]}))
        fi
      done
      if ((${#todo[@]} > 0 && left == 0)) && mirror_on; then
        log "to fetch from the release mirror: ${todo[*]} (seconds each, if it has them)"
      elif ((${#todo[@]} > 0)) && mirror_on; then
        log "to set up: ${todo[*]} (from the release mirror where it serves them; building the rest cold: about $left min on 2 cores)"
      elif ((${#todo[@]} > 0)); then
        log "to build: ${todo[*]} (cold: about $left min on 2 cores; cached afterwards)"
      fi
      # Says which part of how many starts, and roughly how long the rest takes.
      next_part() {
        [[ " ${todo[*]} " == *" $1 "* ]] || return 0
        done_parts=$((done_parts + 1))
        log "[$done_parts/${#todo[@]}] $1 (about $left min left in all)"
        left=$((left - ${minutes_of[$1]}))
      }
      local -A build_of=([etcd]=build_etcd [kubernetes]=build_kubernetes [node]=build_node [pulumi]=build_pulumi
        [pulumi-kubernetes]=build_k8s_provider [crossplane]=build_crossplane [crossplane-legacy]=build_crossplane_legacy
        [crossplane-cli]=build_crossplane_cli
        [provider-kubernetes]=build_provider_kubernetes [coredns]=build_coredns [pulumi-yaml]=build_pulumi_yaml
        [gen-sdk]=build_gen_sdk [python]=build_python)
      for part in "${order[@]}"; do
        want "$part" || continue
        next_part "$part"
        if ! is_built "$(${dir_of[$part]})"; then
          # A CLI on PATH is used where it is; a part from the mirror lands in its cache folder,
          # whose build function then does what it does for a cached one.
          [[ $part != pulumi ]] || ! pulumi_on_path || continue
          ! mirror_on || release_from_mirror "$part" "$(${dir_of[$part]})" || true
        fi
        "${build_of[$part]}"
      done
      log "toolchain ready in $((SECONDS - start))s:"
      status >&2
      ;;
    env)
      print_env
      [[ "${2:-}" != --local-stack ]] || print_local_stack_env
      ;;
    status) status ;;
    *) die "unknown command '$cmd' (use build, env or status)" ;;
  esac
}

main "$@"
