#!/usr/bin/env bash
# The test command (`npm test`): installs what it needs, checks types, lint and format,
# then runs the unit tests and the end-to-end tests against the real Pulumi engine and
# real local Kubernetes API servers. Prints "N passed, N failed" last.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh --test

step() { printf '\033[1m[test]\033[0m %s\n' "$*" >&2; }
step "type check"
npx tsc -p tsconfig.json --noEmit
step "lint and format"
npx eslint .
npx prettier --check . >/dev/null

step "unit and end-to-end tests"
log=$(mktemp)
set +e
if (($# > 0)); then
  specs=("$@")
else
  # Unit tests live beside their code (network/proxy/port-planner.test.ts) or in test/unit.
  specs=('test/unit/**/*.test.ts' 'network/**/*.test.ts' 'local-clusters/**/*.test.ts' 'lib/network-preview/**/*.test.ts' 'network-preview/**/*.test.ts')
  [[ -n "${KLUTCH_SKIP_E2E:-}" ]] || specs+=('test/dataplane/**/*.test.ts' 'test/e2e/**/*.test.ts')
fi
npx mocha --reporter spec "${specs[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
passed=$(grep -oE '^ +[0-9]+ passing' "$log" | grep -oE '[0-9]+' || echo 0)
failed=$(grep -oE '^ +[0-9]+ failing' "$log" | grep -oE '[0-9]+' || echo 0)
rm -f "$log"
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1; fi
echo "${passed} passed, ${failed} failed"
exit "$status"
