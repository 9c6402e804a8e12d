#!/usr/bin/env bash
# The test command (`npm test`): installs what it needs, checks types, lint and format,
# then runs the unit tests and the end-to-end tests against the real Pulumi engine and
# real local Kubernetes API servers. Prints "N passed, N failed" last.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

bash host/scripts/setup.sh --test
# Everything below runs on the project's Node.js (host/scripts/node.sh), and so does every `node` the
# tests start.
PATH="$(bash host/scripts/node.sh --ensure):$ROOT/node_modules/.bin:$PATH"
NODE_COMPILE_CACHE="$(bash host/scripts/node.sh --compile-cache-dir)"
export NODE_COMPILE_CACHE

step() { printf '\033[1m[test]\033[0m %s\n' "$*" >&2; }
# The checks need no cluster and no two of them share a file, so they run side by side on the
# machine's cores (47 s here against 65 s one after another, 2026-11-28); each one's output is printed
# when it fails, under its name.
step "type check, lint, layers, format and shell scripts, side by side"
checks_dir=$(mktemp -d)
declare -A checks=(
  [types]="npx tsc -p tsconfig.json --noEmit"
  [lint]="npx eslint ."
  # Which folder may import which, and which folders are pure (test/architecture/layers.cjs).
  [layers]="npx depcruise --config .dependency-cruiser.cjs --output-type err ."
  [format]="npx prettier --check ."
  # The shell scripts, style warnings included (SC2006 is a backquote that runs a command).
  [shell]="shellcheck -x -P SCRIPTDIR -S style host/scripts/*.sh .ci/run"
)
declare -A check_pids=()
for name in "${!checks[@]}"; do
  # Word splitting of the command line (and the glob of the shell scripts) is wanted here.
  # shellcheck disable=SC2086
  ${checks[$name]} >"$checks_dir/$name" 2>&1 &
  check_pids[$name]=$!
done
checks_failed=()
for name in "${!check_pids[@]}"; do
  wait "${check_pids[$name]}" || checks_failed+=("$name")
done
for name in "${checks_failed[@]}"; do
  printf '\033[1m[test]\033[0m %s failed: %s\n' "$name" "${checks[$name]}" >&2
  cat "$checks_dir/$name" >&2
done
rm -rf "$checks_dir"
((${#checks_failed[@]} == 0)) || exit 1

step "unit and end-to-end tests"
log=$(mktemp)
status=0
run() { npx mocha --reporter spec "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }
set +e
if (($# > 0)); then
  run "$@" || status=$?
else
  # Unit tests live beside their code (network/proxy/model/port-planner.test.ts); test/ holds the
  # architecture's checks (unit tests too), the slow groups below, their helpers and the benchmarks.
  # Two at a time: 45 s against 2 min one after another (2026-11-28); they share no port or file.
  run --parallel --jobs 2 '**/*.test.ts' --ignore 'node_modules/**' --ignore 'sdk/**' \
    --ignore 'test/e2e/**' --ignore 'test/dataplane/**' --ignore 'test/fixtures/**' || status=$?
  if [[ -z "${KLUTCH_SKIP_E2E:-}" ]]; then
    # The slow files run side by side in mocha's worker processes (KLUTCH_E2E_JOBS, default 2):
    # each file brings up its own clusters, state dirs and network namespaces and takes its ports
    # from its own band (test/helpers/ports.ts), so files at once share only the CPUs. Two keep
    # this 2-core machine busy: with three, every file took about 1.8 times as long (again on
    # 2026-11-27: bindings.test.ts 865 s beside two files against 492 s beside one, the CPUs never
    # idle), so three finish later than two. A file's
    # output is printed when it ends, with its time ([file-time], test/helpers/file-timing.ts).
    jobs="${KLUTCH_E2E_JOBS:-2}"
    # Longest first, so the workers finish together (seconds of a fresh-clone run with two
    # workers, 2026-12-03, on 2 cores with about 40 % steal time): a file missing here runs after these.
    longest_first=(
      test/e2e/local-stack.test.ts           # 1719
      test/e2e/bridge.test.ts                # 786
      test/e2e/bridge-pod.test.ts            # 595
      test/e2e/network-preview-stack.test.ts # 572
      test/e2e/environment-bridge.test.ts    # 551
      test/e2e/bindings.test.ts              # 526
      test/e2e/provider-yaml.test.ts         # 232
      test/e2e/provider-yaml-bind.test.ts    # 221
      test/e2e/provider-sdks.test.ts         # 151
      test/e2e/wireguard-pods.test.ts        # 122
      test/e2e/network-preview.test.ts       # 110
    )
    slow=("${longest_first[@]}")
    for file in test/e2e/*.test.ts test/dataplane/*.test.ts; do
      [[ " ${slow[*]} " == *" $file "* ]] || slow+=("$file")
    done
    step "end-to-end and data-plane tests, ${jobs} files at a time"
    run --parallel --jobs "$jobs" --require test/helpers/file-timing.ts "${slow[@]}" || status=$?
  fi
fi
set -e
bash host/scripts/mocha-summary.sh "$log" "$status"
rm -f "$log"
exit "$status"
