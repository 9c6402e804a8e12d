#!/usr/bin/env bash
# Prints "N passed, N failed" from the spec reporter's output of one or more mocha runs
# (each prints "  N passing" and, if any, "  N failing"). STATUS is the runs' exit status: a
# failed run that printed no failing count (a crashed worker, a hook that killed mocha) counts
# as one failure, so the line never reads green for a red run.
# Usage: mocha-summary.sh LOG STATUS
set -euo pipefail
log="$1"
status="$2"
# awk alone: a grep finding no "failing" line exits 1, which under `set -e` would end a green run.
sum() { awk -v word="$1" '$0 ~ "^ +[0-9]+ " word { s += $1 } END { print s + 0 }' "$log"; }
passed=$(sum passing)
failed=$(sum failing)
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1; fi
echo "${passed} passed, ${failed} failed"
