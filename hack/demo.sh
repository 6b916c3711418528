#!/usr/bin/env bash
# The demo of `make demo`, on the running local control plane: builds the
# manager's image and runs it as a pod on the real node with `kubectl kudo
# init` (or, on a cluster with simulated nodes only, as a process beside it,
# stopped by `make cluster-down`), then runs hack/demo-package.sh: the
# project's own first package, examples/hello, installed, and what the
# controllers made of it.
# Environment (set by the Makefile): KUBECONFIG, KUBECTL, KUSTOMIZE, IMG, MAKE.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(dirname "$KUBECONFIG")
kubectl() { "$KUBECTL" "$@"; }

# shellcheck source=hack/lib/manager.sh
source "$root/hack/lib/manager.sh"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

(cd "$root" && go build -o bin/kubectl-kudo ./cmd/kubectl-kudo)
kudo() { "$root/bin/kubectl-kudo" --kubeconfig "$KUBECONFIG" "$@"; }

if kubectl get node kudo-ng-node >/dev/null 2>&1; then
  step "make docker-build cluster-load-image IMG=$IMG: the manager's image, built with no container engine, on the real node"
  "$MAKE" --no-print-directory -C "$root" docker-build cluster-load-image IMG="$IMG" CLUSTER_DIR="$dir"

  ran_before=$(kubectl get deployment kudo-controller-manager -n kudo-system -o name 2>/dev/null || true)
  step "kubectl kudo init --unsafe-self-signed-webhook-ca --kudo-image $IMG --kudo-image-pull-policy Never --wait"
  kudo init --unsafe-self-signed-webhook-ca --kudo-image "$IMG" --kudo-image-pull-policy Never --wait | tail -n 3
  if [[ -n $ran_before ]]; then
    # The image is built again under the same tag: its pods run the old
    # one until they start again.
    step "kubectl rollout restart deployment/kudo-controller-manager: the manager ran already, its pods start on the image just built"
    kubectl rollout restart deployment/kudo-controller-manager -n kudo-system
    kubectl rollout status deployment/kudo-controller-manager -n kudo-system --timeout=180s
  fi
  kubectl get pods -n kudo-system -o wide
else
  step "Installing the kudo.dev CRDs"
  "$KUSTOMIZE" build "$root/config/crd" | kubectl apply --server-side -f -

  step "Starting the manager beside the cluster, which has no real node (log: $dir/logs/manager.log)"
  if [[ -f $dir/pids/manager.pid ]] && kill -0 "$(cat "$dir/pids/manager.pid")" 2>/dev/null; then
    echo "already running"
  else
    start_manager "$root" "$dir" "$dir/logs/manager.log"
  fi
fi

"$root/hack/demo-package.sh"

cat <<MSG

The manager keeps running in the local control plane:
  export KUBECONFIG=$KUBECONFIG
  make cluster-down     # stops the manager and the control plane
MSG
