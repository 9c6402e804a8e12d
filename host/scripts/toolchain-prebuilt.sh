# shellcheck shell=bash
# What setup takes instead of compiling (sourced by host/scripts/toolchain.sh, which defines log,
# die, finish, is_built, module_dir and the *_dir functions): a Pulumi CLI already on PATH, and the
# official release archives from a mirror the operator names. Compiling nine Go programs is 29 of
# the 30.6 minutes of a cold `npm run up` on 2 cores; both ways skip it, and neither contacts a host
# the operator did not name: without KLUTCH_RELEASE_MIRROR everything else is built from the Go
# module proxy, as before. docs/toolchain.md#what-setup-takes-instead-of-building says which parts.

# --- A Pulumi CLI already on PATH --------------------------------------------------------------
# pulumi_version_accepted <version> <pinned>: prints why a CLI of <version> is or is not accepted;
# status 0 when it is. Accepted: a release of the pinned major, the pinned version or newer.
# Not older: @pulumi/pulumi is pinned to PULUMI_VERSION, an SDK newer than its engine may rely on
# what that engine lacks, and the project is tested on that engine (the policy packs' launcher,
# host/automation/policy-host.ts, follows 3.276's way of starting a pack). Newer: Pulumi's
# SDKs work with newer engines (they ask the engine which features it supports; the Automation API
# refuses only an older CLI or another major), and upstream supports only the newest release.
# No pre-releases or dev builds (`v3.277.0-alpha.1+dirty`): nothing says what they carry.
pulumi_version_accepted() {
  local have="${1#v}" want="$2" major="${2%%.*}"
  if [[ ! "$have" =~ ^([0-9]+)\.[0-9]+\.[0-9]+$ ]]; then
    echo "not a release version; accepted: >=$want <$((major + 1)).0.0"
    return 1
  fi
  if [[ "${BASH_REMATCH[1]}" != "$major" || "$(printf '%s\n' "$have" "$want" | sort -V | head -n1)" != "$want" ]]; then
    echo "outside the accepted >=$want <$((major + 1)).0.0"
    return 1
  fi
  echo "within the accepted >=$want <$((major + 1)).0.0"
}

# pulumi_on_path: status 0 when the `pulumi` on PATH is to be used instead of a build (decided once
# per run, saying why on stderr). Off with KLUTCH_PULUMI_FROM_PATH=false. The toolchain's own
# cache entry is not "on PATH" (the caller checks the cache first).
PULUMI_ON_PATH=""
PULUMI_ON_PATH_DECIDED=false
pulumi_on_path() {
  if ! $PULUMI_ON_PATH_DECIDED; then
    PULUMI_ON_PATH_DECIDED=true
    PULUMI_ON_PATH=$(pulumi_cli_on_path) || PULUMI_ON_PATH=""
  fi
  [[ -n "$PULUMI_ON_PATH" ]]
}

pulumi_cli_on_path() {
  local cli real version reason home
  case "${KLUTCH_PULUMI_FROM_PATH:-true}" in
    false | 0 | no) return 1 ;;
    true | 1 | yes) ;;
    *) die "KLUTCH_PULUMI_FROM_PATH=$KLUTCH_PULUMI_FROM_PATH: use true (the default) or false" ;;
  esac
  cli=$(command -v pulumi) || return 1
  real=$(readlink -f "$cli")
  # In a PULUMI_HOME of its own: `pulumi version` writes nothing where the user keeps their state.
  home=$(mktemp -d)
  version=$(PULUMI_SKIP_UPDATE_CHECK=true PULUMI_HOME="$home" "$cli" version 2>/dev/null) ||
    version="(no version reported)"
  rm -rf "$home"
  if ! reason=$(pulumi_version_accepted "$version" "$PULUMI_VERSION"); then
    log "pulumi on PATH ($cli) is $version, $reason: not used, the CLI $PULUMI_VERSION is set up instead"
    return 1
  fi
  # The engine looks for the dynamic provider host next to its own binary (install_bundled_plugins).
  if [[ ! -x "$(dirname "$real")/pulumi-resource-pulumi-nodejs" ]]; then
    log "pulumi on PATH ($cli, $version) has no pulumi-resource-pulumi-nodejs beside it, which every official distribution ships and dynamic providers need: not used"
    return 1
  fi
  log "pulumi on PATH: $cli ($version, $reason): used as it is, nothing built (KLUTCH_PULUMI_FROM_PATH=false builds $PULUMI_VERSION instead)"
  echo "$cli"
}

# --- Checksums ---------------------------------------------------------------------------------
# checksum_in <checksums file> <file name>: the SHA-256 a published checksums file gives for <file
# name>. Two shapes upstreams publish: a list of "<sum>  <name>" lines (etcd's SHA256SUMS, Pulumi's
# and GoReleaser's *checksums.txt; "*<name>" in binary mode) and a file of the bare sum (Kubernetes'
# and Crossplane's <file>.sha256). Prints nothing when the file names no sum for it.
checksum_in() {
  awk -v name="$2" '
    function sum(s) { return length(s) == 64 && s ~ /^[0-9a-fA-F]+$/ }
    { sub(/\r$/, "") }
    NF == 0 { next }
    { lines++ }
    NF == 1 && sum($1) { bare = tolower($1); next }
    NF >= 2 && sum($1) { n = $2; sub(/^\*/, "", n); sub(/^\.\//, "", n); if (n == name) { print tolower($1); found = 1; exit } }
    END { if (!found && lines == 1 && bare != "") print bare }
  ' "$1"
}
