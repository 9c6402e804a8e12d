#!/usr/bin/env bash
# Connects to the bound database from a pod in an app cluster (app-1 unless named) with the
# binding's Secret: copies the Secret from the control plane to the app cluster (what the
# konnector does for a binding's Secret), then runs psql in a pod on its node with the Secret's
# host, port and credentials, or its uri where it has one.
#   bash examples/data-service/connect-from-app-cluster.sh [binding] [namespace] [app cluster]
set -euo pipefail
binding="${1:-orders-app}"
ns="${2:-cluster-app-1}"
app="${3:-app-1}"
secret="${binding}-credentials"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
eval "$(bash "$ROOT/host/scripts/toolchain.sh" env --local-stack)"
node() { bash "$ROOT/host/scripts/node.sh" node "$@"; }
# The PostgreSQL image the app cluster's node imported (nothing can be pulled on a local node).
image=$(node -p 'require(process.argv[1]).images.postgres' "${KLUTCH_LOCAL_DIR:-$ROOT/.klutch/local}/$app/node/node.json")
kubectl --context "$app" create namespace data-consumer --dry-run=client -o yaml | kubectl --context "$app" apply -f - >/dev/null
kubectl --context control-plane -n "$ns" get secret "$secret" -o json |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s);console.log(JSON.stringify({apiVersion:"v1",kind:"Secret",metadata:{name:o.metadata.name,namespace:"data-consumer"},type:o.type,data:o.data}))})' |
  kubectl --context "$app" apply -f - >/dev/null
kubectl --context "$app" -n data-consumer delete pod psql --ignore-not-found >/dev/null
# A key the Secret may lack is optional: a8s's has `database` and no `uri`; a9s's has `uri` (with
# the database in it) and `name` instead. psql takes the URI when there is one.
env_from() { printf '{"name":"%s","valueFrom":{"secretKeyRef":{"name":"%s","key":"%s","optional":%s}}}' "$1" "$secret" "$2" "${3:-false}"; }
kubectl --context "$app" -n data-consumer apply -f - >/dev/null <<JSON
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"psql"},"spec":{"restartPolicy":"Never",
 "containers":[{"name":"psql","image":"$image","imagePullPolicy":"Never",
  "command":["sh","-c","psql \${URI:+\"\$URI\"} -tA -c \"select 'connected to ' || current_database() || ' as ' || current_user\""],
  "env":[$(env_from PGHOST host),$(env_from PGPORT port),$(env_from PGUSER username),$(env_from PGPASSWORD password),$(env_from PGDATABASE database true),$(env_from URI uri true),{"name":"PGCONNECT_TIMEOUT","value":"10"}]}]}}
JSON
# Until psql has ended either way (a wait for Succeeded alone sat out its whole timeout when psql
# failed, so a caller that retries lost two minutes a try).
phase=
for _ in $(seq 1 120); do
  phase=$(kubectl --context "$app" -n data-consumer get pod psql -o 'jsonpath={.status.phase}')
  [[ "$phase" == Succeeded || "$phase" == Failed ]] && break
  sleep 1
done
kubectl --context "$app" -n data-consumer logs psql
[[ "$phase" == Succeeded ]]
