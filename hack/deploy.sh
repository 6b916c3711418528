#!/usr/bin/env bash
# `make deploy` and `make undeploy`: config/default, with the manager image
# $IMG, on the cluster of the current kubeconfig.
#
# The webhook server's certificate comes from cert-manager where it is
# installed. Elsewhere (the local control plane, a bare cluster) a self-signed
# CA and serving certificate are made here and kept in $DEPLOY_DIR/certs: the
# certificate goes into the Secret the manager mounts and the CA into the
# webhook configurations, in place of cert-manager's Issuer, Certificate and
# CA injection.
#
# undeploy keeps the CRDs: deleting them would delete every Instance and,
# through owner references, everything its package deployed. `make uninstall`
# removes them.
#
# With SHARD set, it deploys (or deletes) instead one more manager beside
# config/default's, for the Instances labelled sharding.kudo.dev/key=$SHARD:
# the Deployment kudo-controller-manager-$SHARD, started with --shard, with
# its own leader election, the same service account, and no webhooks (the
# unsharded manager serves them; its Services do not select shard pods). One
# replica and no PodDisruptionBudget: a second one would only hold a second
# cache of the shard, since no webhook call waits on a shard's manager.
#
# With MULTI_TENANT=true, it deploys config/multi-tenant instead: the
# manager with --multi-tenant and without its privileged ClusterRole
# (config/tenancy), which a deploy over a privileged one removes.
#
# Usage: deploy.sh apply|delete. Environment: KUBECTL, KUSTOMIZE, IMG,
# DEPLOY_DIR (default bin/deploy), IGNORE_NOT_FOUND (delete), SHARD,
# MULTI_TENANT.
set -euo pipefail

action=$1
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${DEPLOY_DIR:-$root/bin/deploy}
# config/default's namePrefix and namespace.
namespace=kudo-system
service=kudo-webhook-service

if [[ -n ${SHARD:-} ]]; then
  shard_dir=$dir/shard-$SHARD
  mkdir -p "$shard_dir"
  cat >"$shard_dir/kustomization.yaml" <<YAML
namespace: $namespace
namePrefix: kudo-
nameSuffix: -$SHARD
resources:
- $(realpath --relative-to "$shard_dir" "$root/config/manager")
patches:
- patch: |-
    \$patch: delete
    apiVersion: v1
    kind: Namespace
    metadata:
      name: system
- patch: |-
    \$patch: delete
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: controller-manager
      namespace: system
- target:
    kind: Deployment
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 1
    - op: replace
      path: /spec/template/spec/containers/0/image
      value: $IMG
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --shard=$SHARD
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --enable-webhooks=false
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --metrics-bind-address=:8443
    - op: replace
      path: /spec/template/spec/serviceAccountName
      value: kudo-controller-manager
    - op: replace
      path: /spec/selector/matchLabels/control-plane
      value: shard-manager
    - op: replace
      path: /spec/template/metadata/labels/control-plane
      value: shard-manager
    - op: replace
      path: /metadata/labels/control-plane
      value: shard-manager
    - op: add
      path: /spec/selector/matchLabels/sharding.kudo.dev~1key
      value: "$SHARD"
    - op: add
      path: /spec/template/metadata/labels/sharding.kudo.dev~1key
      value: "$SHARD"
YAML
  manifests=$("$KUSTOMIZE" build "$shard_dir")
  case $action in
  apply) "$KUBECTL" apply --server-side --force-conflicts -f - <<<"$manifests" ;;
  delete) "$KUBECTL" delete --ignore-not-found="${IGNORE_NOT_FOUND:-false}" -f - <<<"$manifests" ;;
  *)
    echo "usage: $0 apply|delete" >&2
    exit 2
    ;;
  esac
  exit 0
fi

# The image is set in an overlay of our own: `kustomize edit` in
# config/manager would change a committed file.
overlay=config/default
[[ ${MULTI_TENANT:-false} == true ]] && overlay=config/multi-tenant
mkdir -p "$dir"
cat >"$dir/kustomization.yaml" <<YAML
resources:
- $(realpath --relative-to "$dir" "$root/$overlay")
patches:
- target:
    kind: Deployment
    name: kudo-controller-manager
  patch: |-
    - op: replace
      path: /spec/template/spec/containers/0/image
      value: $IMG
YAML

if "$KUBECTL" get crd certificates.cert-manager.io >/dev/null 2>&1; then
  manifests=$("$KUSTOMIZE" build "$dir")
else
  # shellcheck source=hack/lib/certs.sh
  source "$root/hack/lib/certs.sh"
  serving_cert "$dir/certs" "$service.$namespace.svc" \
    "DNS:$service.$namespace.svc, DNS:$service.$namespace.svc.cluster.local"
  manifests=$("$KUSTOMIZE" build "$dir" | (cd "$root" && go run ./hack/webhookca --ca "$dir/certs/ca.crt"))
  manifests+=$'\n---\n'$("$KUBECTL" create secret tls webhook-server-cert --namespace "$namespace" \
    --cert "$dir/certs/tls.crt" --key "$dir/certs/tls.key" --dry-run=client -o yaml)
  [[ $action == apply ]] && echo "cert-manager is not installed: the webhooks trust a self-signed CA ($dir/certs/ca.crt)" >&2
fi

case $action in
apply)
  # Forced: these objects are ours. hack/webhook-local.sh (make run) applies
  # the webhook configurations with the same field manager.
  "$KUBECTL" apply --server-side --force-conflicts -f - <<<"$manifests"
  if [[ $overlay == config/multi-tenant ]]; then
    "$KUBECTL" delete clusterrolebinding/kudo-manager-privileged-rolebinding clusterrole/kudo-manager-privileged-role --ignore-not-found
  fi
  ;;
delete)
  # Documents are separated by "---" lines; drop the CRDs.
  awk 'BEGIN { RS = "\n---\n" } !/(^|\n)kind: CustomResourceDefinition\n/ { printf "%s\n---\n", $0 }' <<<"$manifests" |
    "$KUBECTL" delete --ignore-not-found="${IGNORE_NOT_FOUND:-false}" -f -
  ;;
*)
  echo "usage: $0 apply|delete" >&2
  exit 2
  ;;
esac
