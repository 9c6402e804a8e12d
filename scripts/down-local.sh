#!/usr/bin/env bash
# Tears the embedded default down: `pulumi destroy` while the clusters still answer, then
# stops every local cluster process.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The local stack is throw-away and `npm run down` is the explicit request: no question asked.
bash scripts/node.sh tsx scripts/pulumi.ts --stack local destroy --yes
bash scripts/node.sh tsx scripts/local-clusters.ts down
