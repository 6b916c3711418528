#!/usr/bin/env bash
# Stops the local control plane of up.sh and removes its data, leaving no
# process, mount, network namespace or container behind.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${CLUSTER_DIR:-$root/bin/cluster}
[[ -d $dir ]] || exit 0
dir=$(cd "$dir" && pwd)
# shellcheck source=../versions.env
source "$root/hack/versions.env"
assets=$root/bin/k8s/$KUBERNETES_VERSION-$(go env GOOS)-$(go env GOARCH)

# shellcheck source=node.sh
source "$root/hack/cluster/node.sh"
[[ -d $(node_dir) ]] && node_down

# Stop the components before the API server and etcd, so they exit quietly.
for name in manager provisioner kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop_component "$name"
done
# Every component names a file under $dir on its command line: catch any
# process whose pid file was lost.
pkill -9 -f -- "$dir/" 2>/dev/null || true
rm -rf "$dir"
echo "cluster-down: stopped and removed $dir" >&2
