#!/usr/bin/env bash
# The package part of `make demo`, against a cluster whose manager runs:
# installs examples/hello, shows its plan, deletes its Deployment and shows
# the Instance not Ready naming it, then turns drift correction on and shows
# it applied again. It needs nothing but the repository (an e2e spec runs it
# from a clone with nothing beside it).
# Environment: KUBECONFIG, KUBECTL; NAMESPACE (default: the kubeconfig's).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ns=()
if [[ -n ${NAMESPACE:-} ]]; then
  ns=(--namespace "$NAMESPACE")
fi
kubectl() { "$KUBECTL" "${ns[@]}" "$@"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

(cd "$root" && go build -o bin/kubectl-kudo ./cmd/kubectl-kudo)
kudo() { "$root/bin/kubectl-kudo" --kubeconfig "$KUBECONFIG" "${ns[@]}" "$@"; }

package=examples/hello/operator
instance=hello-instance

step "kubectl kudo install $package --wait"
if kubectl get instance "$instance" >/dev/null 2>&1; then
  echo "already installed"
else
  kudo install "$root/$package" --wait
fi

step "kubectl kudo plan status --instance $instance"
kudo plan status --instance "$instance"

step "kubectl get kudo,deployments"
kubectl get kudo,deployments

step "kubectl delete deployment $instance: the Instance is not Ready, naming it"
kubectl annotate "instance/$instance" kudo.dev/drift-correction=false --overwrite >/dev/null
kubectl delete deployment "$instance"
kubectl wait "instance/$instance" --for=condition=Ready=false --timeout=60s
kudo plan status --instance "$instance" | grep '^Not ready'
kubectl get instances

step "kubectl annotate instance/$instance kudo.dev/drift-correction=true: it is applied again, Ready again"
kubectl annotate "instance/$instance" kudo.dev/drift-correction=true --overwrite
kubectl wait "instance/$instance" --for=condition=Ready --timeout=120s
kubectl get instances,deployments
kubectl get events --field-selector "involvedObject.name=$instance" \
  -o custom-columns=REASON:.reason,MESSAGE:.message | grep -E 'REASON|Missing|DriftCorrected|ResourcesReady'
