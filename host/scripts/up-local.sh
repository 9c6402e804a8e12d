#!/usr/bin/env bash
# One command for the embedded default: install what is needed, start the local clusters
# of the `local` stack, and run the real `pulumi up` on it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
bash host/scripts/setup.sh
bash host/scripts/node.sh ts programs/commands/local-clusters.ts up --stack local
# `npm run up` is the explicit request to bring the local stack up: no question asked. Each
# cluster has a node: Crossplane and the bridge run as pods on the control plane's, and
# `pulumi up` waits until they are Ready.
bash host/scripts/node.sh ts programs/commands/pulumi.ts --stack local up --yes
