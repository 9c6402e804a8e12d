# shellcheck shell=bash
# The official release archives from a mirror the operator names (sourced by
# host/scripts/toolchain.sh, after toolchain-prebuilt.sh). KLUTCH_RELEASE_MIRROR=<base URL> is the
# one setting, unset by default: then nothing here runs and no host but the Go module proxy is
# contacted. The mirror keeps each official download under its URL without "https://"
# (<base>/dl.k8s.io/release/v1.37.2/bin/linux/amd64/kubectl), the layout of a caching proxy that
# keeps one folder per upstream host. Every file is checked against the checksums its upstream
# publishes beside it, fetched from the same mirror; a mismatch is refused. A part whose file or
# checksums the mirror has not (HTTP 404 or 410) is built from the Go module proxy as without it.

mirror_on() { [[ -n "${KLUTCH_RELEASE_MIRROR:-}" ]]; }
mirror_url() { echo "${KLUTCH_RELEASE_MIRROR%/}/${1#https://}"; }

# mirror_get <official URL> <file>: status 1 when the mirror has not the file. Anything else that
# fails stops setup: the operator named this mirror, and a silent half-hour build would hide it.
mirror_get() {
  local url code
  url=$(mirror_url "$1")
  command -v curl >/dev/null || die "KLUTCH_RELEASE_MIRROR needs curl (apt-get install curl)"
  code=$(curl -sS -L --proto '=http,https' --retry 2 -o "$2" -w '%{http_code}' "$url") ||
    die "the release mirror did not answer for $url (KLUTCH_RELEASE_MIRROR=$KLUTCH_RELEASE_MIRROR): fix the address, or unset KLUTCH_RELEASE_MIRROR to build from the Go module proxy"
  case "$code" in
    200) return 0 ;;
    404 | 410)
      rm -f "$2"
      log "  not on the release mirror: $url"
      return 1
      ;;
    *) die "the release mirror answered HTTP $code for $url (KLUTCH_RELEASE_MIRROR=$KLUTCH_RELEASE_MIRROR)" ;;
  esac
}

# mirror_fetch <official URL> <official URL of its checksums> <folder>: the file, checked, in
# <folder> under its official name. Status 1 when the mirror has not one of the two.
mirror_fetch() {
  local url="$1" sums_url="$2" name expected actual
  name=$(basename "$url")
  mirror_get "$sums_url" "$3/$name.checksums" || return 1
  mirror_get "$url" "$3/$name" || return 1
  expected=$(checksum_in "$3/$name.checksums" "$name")
  [[ -n "$expected" ]] ||
    die "$(mirror_url "$sums_url") gives no SHA-256 for $name: the mirror's copy of $sums_url is not upstream's; fetch it again, or unset KLUTCH_RELEASE_MIRROR to build from the Go module proxy"
  actual=$(sha256sum "$3/$name" | cut -d' ' -f1)
  if [[ "$actual" != "$expected" ]]; then
    rm -f "$3/$name"
    die "checksum mismatch: $name from the release mirror ($(mirror_url "$url")) has SHA-256 $actual, but $(basename "$sums_url") publishes $expected; refused. Fix: replace the mirror's copy with the official file ($url), or unset KLUTCH_RELEASE_MIRROR to build from the Go module proxy"
  fi
}

# mirror_binaries <bin folder> <base URL> <name>...: bare binaries, each with its <name>.sha256.
mirror_binaries() {
  local bin="$1" base="$2" name
  shift 2
  mkdir -p "$bin"
  for name in "$@"; do
    mirror_fetch "$base/$name" "$base/$name.sha256" "$bin" || return 1
    rm -f "$bin/$name.checksums" && chmod 0755 "$bin/$name"
  done
}

# mirror_archive <bin folder> <URL> <checksums URL> <path in the archive>...: a .tar.gz whose
# named files (or every file of a named folder) are put into <bin folder>.
mirror_archive() {
  local bin="$1" url="$2" sums="$3" tmp member
  shift 3
  tmp="$bin/.mirror"
  rm -rf "$tmp" && mkdir -p "$tmp"
  mirror_fetch "$url" "$sums" "$tmp" || return 1
  tar -xzf "$tmp/$(basename "$url")" -C "$tmp" || die "could not unpack $(basename "$url") from the release mirror"
  for member in "$@"; do
    [[ -e "$tmp/$member" ]] || die "$(basename "$url") from the release mirror has no $member"
    if [[ -d "$tmp/$member" ]]; then cp -a "$tmp/$member/." "$bin/"; else cp -a "$tmp/$member" "$bin/"; fi ||
      die "could not copy $member out of $(basename "$url")"
  done
  rm -rf "$tmp"
}

# The parts a mirror can serve and the version each one's release has. provider-kubernetes
# (released only as a package image), the YAML language host, the SDK generators and Python's SDK
# are not among them: they are built as without a mirror.
mirror_version_of() {
  case "$1" in
    pulumi) echo "$PULUMI_VERSION" ;;
    pulumi-kubernetes) echo "$PULUMI_KUBERNETES_VERSION" ;;
    kubernetes | node) echo "$KUBERNETES_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    crossplane) echo "$CROSSPLANE_VERSION" ;;
    crossplane-legacy | crossplane-cli) echo "$CROSSPLANE_LEGACY_VERSION" ;;
    coredns) echo "$COREDNS_VERSION" ;;
    *) return 1 ;;
  esac
}

# release_from_mirror <part> <cache folder>: installs the part's official release into its cache
# folder and marks it complete; status 1 (nothing left in the folder) when the mirror cannot.
release_from_mirror() {
  local part="$1" dir="$2" v gh=https://github.com xp=https://releases.crossplane.io/stable
  if ! v=$(mirror_version_of "$part"); then
    log "$part: not taken from a release mirror (docs/toolchain.md says which parts are); building it as without one"
    return 1
  fi
  local k8s="https://dl.k8s.io/release/v$v/bin/linux/amd64"
  log "$part $v: fetching the official release from the mirror ($KLUTCH_RELEASE_MIRROR)"
  rm -rf "$dir" && mkdir -p "$dir/bin"
  if case "$part" in
    pulumi)
      local p="$gh/pulumi/pulumi/releases/download/v$v"
      # The whole distribution: the CLI and the plugins it ships beside itself.
      mirror_archive "$dir/bin" "$p/pulumi-v$v-linux-x64.tar.gz" "$p/pulumi-$v-checksums.txt" pulumi
      ;;
    pulumi-kubernetes)
      local k="$gh/pulumi/pulumi-kubernetes/releases/download/v$v"
      mirror_archive "$dir/bin" "$k/pulumi-resource-kubernetes-v$v-linux-amd64.tar.gz" \
        "$k/pulumi-kubernetes_${v}_checksums.txt" pulumi-resource-kubernetes
      ;;
    kubernetes) mirror_binaries "$dir/bin" "$k8s" kube-apiserver kube-controller-manager kubectl ;;
    # pause is no release file: compiled from the module's pause.c, as a build does.
    node) mirror_binaries "$dir/bin" "$k8s" kubelet kube-proxy kube-scheduler && build_pause "$dir" ;;
    etcd)
      local e="$gh/etcd-io/etcd/releases/download/v$v"
      mirror_archive "$dir/bin" "$e/etcd-v$v-linux-amd64.tar.gz" "$e/SHA256SUMS" "etcd-v$v-linux-amd64/etcd"
      ;;
    crossplane | crossplane-legacy)
      local module=github.com/crossplane/crossplane
      [[ "$part" == crossplane-legacy ]] || module=github.com/crossplane/crossplane/v2
      # The chart and CRDs are no release file: the module's cluster/ folder, as a build copies it.
      mirror_binaries "$dir/bin" "$xp/v$v/bin/linux_amd64" crossplane &&
        cp -r "$(module_dir "$module@v$v")/cluster" "$dir/cluster" && chmod -R u+w "$dir/cluster"
      ;;
    crossplane-cli) mirror_binaries "$dir/bin" "$xp/v$v/bin/linux_amd64" crank ;;
    coredns)
      local c="$gh/coredns/coredns/releases/download/v$v" tgz="coredns_${v}_linux_amd64.tgz"
      mirror_archive "$dir/bin" "$c/$tgz" "$c/$tgz.sha256" coredns
      ;;
  esac then
    finish "$dir" "$part v$v (official release, from the mirror $KLUTCH_RELEASE_MIRROR)"
    return 0
  fi
  rm -rf "$dir"
  log "$part $v: not all on the release mirror; building it from the Go module proxy instead"
  return 1
}
