#!/usr/bin/env bash
# Prints "N passed, N failed" from the spec reporter's output of one or more mocha runs (each
# prints "  N passing" and, if any, "  N failing"), after the failures' titles and messages.
# STATUS is the runs' exit status: a failed run that printed no failing count (a crashed worker, a hook that killed mocha) counts
# as one failure, so the line never reads green for a red run.
# Usage: mocha-summary.sh LOG STATUS
set -euo pipefail
log="$1"
status="$2"
# awk alone: a grep finding no "failing" line exits 1, which under `set -e` would end a green run.
sum() { awk -v word="$1" '$0 ~ "^ +[0-9]+ " word { s += $1 } END { print s + 0 }' "$log"; }
passed=$(sum passing)
failed=$(sum failing)
crashed=""
if [[ $status -ne 0 && $failed -eq 0 ]]; then failed=1 crashed=1; fi
# Each failure's title and message again, without stacks, so the last lines of a long run (all
# a CI page may keep) say what failed and why, not only how many.
if ((failed > 0)); then
  echo "failed:"
  awk '
    /^ +[0-9]+ failing/ { inside = 1; next }
    /^\[file-time\]/ || /^ +[0-9]+ passing/ { inside = 0 }
    inside && /^ +[0-9]+\) / { show = 1 }
    inside && /^ +at / { show = 0 }
    inside && show && NF > 0 { print }
  ' "$log" | head -80
  [[ -z $crashed ]] || echo "  a mocha run exited ${status} without naming a failing test: its own output above says why"
fi
echo "${passed} passed, ${failed} failed"
