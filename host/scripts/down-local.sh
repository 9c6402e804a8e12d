#!/usr/bin/env bash
# Tears the embedded default down: `pulumi destroy` while the clusters still answer, then
# stops every local cluster process. The clusters are stopped even when the destroy fails,
# and what the destroy left is said.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
# The local stack is throw-away and `npm run down` is the explicit request: no question asked.
bash host/scripts/node.sh ts programs/commands/pulumi.ts --stack local destroy --yes
destroyed=$?
bash host/scripts/node.sh ts programs/commands/local-clusters.ts down
stopped=$?
if [ "$destroyed" -ne 0 ]; then
  state_dir="${KLUTCH_LOCAL_DIR:-$ROOT/.klutch/local}"
  cat >&2 <<MSG

npm run down: the destroy failed (its error is above); the local clusters are stopped anyway.
Left: the resources still in the stack's state, on clusters whose data stays in $state_dir.
  npm run up                          starts the clusters again and brings the stack back as it was
  npm run down                        tries the destroy again where it stopped
MSG
  exit "$destroyed"
fi
exit "$stopped"
