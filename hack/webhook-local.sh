#!/usr/bin/env bash
# Points the cluster's admission webhooks (those of config/webhook) at a
# manager running outside it, on 127.0.0.1:$WEBHOOK_PORT, with a self-signed
# CA and serving certificate kept in $WEBHOOK_DIR. The manager then runs with
#   --webhook-cert-dir "$WEBHOOK_DIR" --webhook-host 127.0.0.1 --webhook-port "$WEBHOOK_PORT"
# It also makes the namespace kudo-system, where a manager outside the
# cluster keeps its mask key (--mask-key-namespace).
# While it is not running, Instances and OperatorVersions cannot be changed
# (failurePolicy Fail), but a deleted Instance's finalizer can go;
# `make undeploy-local-webhook` removes the configuration.
# Environment: KUBECONFIG, KUBECTL, KUSTOMIZE (default bin/kustomize),
# WEBHOOK_DIR (default bin/webhook-local), WEBHOOK_PORT (default 9443).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${WEBHOOK_DIR:-$root/bin/webhook-local}
port=${WEBHOOK_PORT:-9443}

# shellcheck source=hack/lib/certs.sh
source "$root/hack/lib/certs.sh"
serving_cert "$dir" 127.0.0.1 "IP:127.0.0.1, DNS:localhost"

# Applied server-side as `make deploy` does: the same field manager, so
# each replaces the other's clientConfig instead of adding to it.
"${KUSTOMIZE:-$root/bin/kustomize}" build "$root/config/webhook" |
  (cd "$root" && go run ./hack/webhookca --url "https://127.0.0.1:$port" --ca "$dir/ca.crt") |
  "$KUBECTL" apply --server-side --force-conflicts -f - >/dev/null
"$KUBECTL" create namespace kudo-system --dry-run=client -o yaml | "$KUBECTL" apply --server-side -f - >/dev/null
echo "webhooks point at https://127.0.0.1:$port (certificates in $dir)" >&2
