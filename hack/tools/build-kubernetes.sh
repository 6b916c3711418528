#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, and
# the real node's kubelet and kube-proxy, of
# KUBERNETES_VERSION from the Go module proxy into bin/k8s/<version>-linux-amd64
# (the setup-envtest store layout, so KUBEBUILDER_ASSETS can point there).
# A cached build is not redone.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../versions.env
source "$root/hack/versions.env"
version=$KUBERNETES_VERSION
assets=$root/bin/k8s/$version-$(go env GOOS)-$(go env GOARCH)
commands=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)

missing=0
for c in "${commands[@]}"; do [[ -x $assets/$c ]] || missing=1; done
[[ $missing == 0 ]] && exit 0

work=$root/bin/.tools/kubernetes-v$version
mkdir -p "$work" "$assets"
echo "building Kubernetes v$version (${commands[*]}) from the module proxy; first run only, about 5 minutes" >&2
start=$SECONDS

# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
# with ./staging; outside its repository they must be replaced by the published
# v0.<minor>.<patch> modules. Derive the list from upstream's go.mod so that a
# version bump stays a one-line change in versions.env.
upstream_mod=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$version" |
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
staging_version=v0.${version#1.}
upstream_go=$(sed -n 's/^go \(.*\)$/\1/p' "$upstream_mod")
{
  echo "module kudo-ng.local/tools/kubernetes"
  echo
  echo "go $upstream_go"
  echo
  echo "godebug default=go1.24"
  echo
  echo "require k8s.io/kubernetes v$version"
  echo
  echo "replace ("
  sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*$|\1|p' "$upstream_mod" |
    while read -r m; do echo "	$m => $m $staging_version"; done
  echo ")"
  echo
  echo "tool ("
  for c in "${commands[@]}"; do
    if [[ $c == kubectl ]]; then echo "	k8s.io/kubernetes/cmd/kubectl"; else echo "	k8s.io/kubernetes/cmd/$c"; fi
  done
  echo ")"
} >"$work/go.mod"

minor=${version#*.}
minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=v$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

cd "$work"
go mod tidy
mkdir -p out
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o out/ \
  $(for c in "${commands[@]}"; do echo "k8s.io/kubernetes/cmd/$c"; done)
for c in "${commands[@]}"; do mv "out/$c" "$assets/$c"; done
echo "built Kubernetes v$version in $((SECONDS - start))s" >&2
