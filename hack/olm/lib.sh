# What hack/olm/up.sh (OLM) and hack/olm/v1-up.sh (OLM v1) share: the local
# control plane and its registry, checked, and images built here without a
# container engine and pushed there. Sourced; the caller sets `name` (its
# messages' prefix) and `cluster_up` (how to start a cluster it runs on).
#
# Environment: KUBECONFIG (default bin/cluster/kubeconfig), LOCAL_REGISTRY
# (default 10.244.0.1:5000) and its CA, LOCAL_REGISTRY_CA (default
# bin/cluster/pki/registry-ca.crt).

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../versions.env
source "$root/hack/versions.env"
bin=$root/bin
kubeconfig=${KUBECONFIG:-$bin/cluster/kubeconfig}
kubectl() { "$bin/k8s/$KUBERNETES_VERSION-$(go env GOOS)-$(go env GOARCH)/kubectl" --kubeconfig "$kubeconfig" "$@"; }
registry=${LOCAL_REGISTRY:-10.244.0.1:5000}
registry_ca=${LOCAL_REGISTRY_CA:-$bin/cluster/pki/registry-ca.crt}
start=$SECONDS

fail() {
  echo "$name: $*" >&2
  exit 1
}

# The cluster answers, its registry too, and every pod runs on its real node:
# no taint keeps them off it, and no simulated node, which kwok only pretends
# to run pods on, takes them.
kubectl get --raw /readyz >/dev/null 2>&1 || fail "no cluster answers (make cluster-up, or KUBECONFIG)"
curl -fs -m 2 -o /dev/null --cacert "$registry_ca" "https://$registry/v2/" || fail "the cluster's registry $registry does not answer: pods pull from the real node's"
if [[ -n $(kubectl get nodes -l kudo-ng.dev/simulated -o name) ]] ||
  [[ -n $(kubectl get nodes -o jsonpath='{.items[*].spec.taints}') ]]; then
  fail "its pods need an untainted real node and no simulated nodes: make cluster-down, then $cluster_up"
fi

# image DOCKERFILE TAG NAME=BINARY... builds the image and pushes it where
# the real node pulls from.
image() {
  local args=(--dockerfile "$1" --tag "$2" --push) binary
  shift 2
  for binary in "$@"; do args+=(--binary "$binary"); done
  (cd "$root" && SSL_CERT_FILE=$registry_ca go run ./hack/image "${args[@]}") >/dev/null
}
