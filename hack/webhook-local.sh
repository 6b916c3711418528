#!/usr/bin/env bash
# Points the cluster's admission webhooks (those of config/webhook) at a
# manager running outside it, on 127.0.0.1:$WEBHOOK_PORT, with a self-signed
# CA and serving certificate kept in $WEBHOOK_DIR. The manager then runs with
#   --webhook-cert-dir "$WEBHOOK_DIR" --webhook-host 127.0.0.1 --webhook-port "$WEBHOOK_PORT"
# While it is not running, Instances and OperatorVersions cannot be changed
# (failurePolicy Fail); `make undeploy-local-webhook` removes the configuration.
# Environment: KUBECONFIG, KUBECTL, WEBHOOK_DIR (default bin/webhook-local),
# WEBHOOK_PORT (default 9443).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${WEBHOOK_DIR:-$root/bin/webhook-local}
port=${WEBHOOK_PORT:-9443}
mkdir -p "$dir"

if [[ ! -f $dir/tls.crt ]]; then
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -subj "/CN=kudo-ng-webhook-ca" \
    -days 3650 -out "$dir/ca.crt" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/tls.key" -subj "/CN=127.0.0.1" -out "$dir/tls.csr" 2>/dev/null
  printf 'subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n' >"$dir/tls.ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 3650 \
    -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
fi

(cd "$root" && go run ./hack/cluster/localwebhook --manifests config/webhook/manifests.yaml \
  --url "https://127.0.0.1:$port" --ca "$dir/ca.crt") | "$KUBECTL" apply -f - >/dev/null
echo "webhooks point at https://127.0.0.1:$port (certificates in $dir)" >&2
