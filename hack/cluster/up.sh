#!/usr/bin/env bash
# Starts a local control plane: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok with simulated nodes, a hostPath volume provisioner
# behind a default StorageClass, and a real node that runs containers
# (node.sh). Writes $CLUSTER_DIR/kubeconfig. Running it again on a running
# cluster does nothing.
#
# Environment: CLUSTER_DIR (default bin/cluster), CLUSTER_PORT_BASE (default
# 16440; the cluster uses ports up to 23 above it), CLUSTER_NODES (simulated
# nodes, default 3), CLUSTER_NODE_PODS (pods per simulated node, default 110
# as a kubelet's), CLUSTER_REAL_NODE (default true; false for simulated nodes
# only, which needs neither root nor containerd), CLUSTER_REAL_NODE_TAINT
# (default true; false leaves the real node untainted, for OLM), CLUSTER_APISERVER_PROFILING
# (default false; true serves the API server's /debug/pprof, as make bench
# wants it).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../versions.env
source "$root/hack/versions.env"
dir=$(mkdir -p "${CLUSTER_DIR:-$root/bin/cluster}" && cd "${CLUSTER_DIR:-$root/bin/cluster}" && pwd)
base=${CLUSTER_PORT_BASE:-16440}
nodes=${CLUSTER_NODES:-3}
node_pods=${CLUSTER_NODE_PODS:-110}
assets=$root/bin/k8s/$KUBERNETES_VERSION-$(go env GOOS)-$(go env GOARCH)
kubectl=$assets/kubectl
etcd_port=$((base + 1)) etcd_peer_port=$((base + 2)) apiserver_port=$((base + 3))
kcm_port=$((base + 4)) scheduler_port=$((base + 5)) kwok_port=$((base + 6))
pki=$dir/pki logs=$dir/logs pids=$dir/pids
kubeconfig=$dir/kubeconfig
real_node=${CLUSTER_REAL_NODE:-true}
real_node_taint=${CLUSTER_REAL_NODE_TAINT:-true}
profiling=${CLUSTER_APISERVER_PROFILING:-false}
start=$SECONDS
# shellcheck source=node.sh
source "$root/hack/cluster/node.sh"

running() { [[ -f $pids/$1.pid ]] && kill -0 "$(cat "$pids/$1.pid")" 2>/dev/null; }

usage() {
  cat <<MSG
Local control plane is up ($nodes simulated nodes$([[ $real_node == true ]] && echo " and the real node $node_name"), Kubernetes v$KUBERNETES_VERSION).
  export KUBECONFIG=$kubeconfig
  $kubectl get nodes
Logs: $logs   Stop it: make cluster-down
MSG
}

if running kube-apiserver && "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; then
  usage
  exit 0
fi
# A half-started or crashed cluster is cleaned up before starting again.
CLUSTER_DIR=$dir "$root/hack/cluster/down.sh" 2>/dev/null
mkdir -p "$pki" "$logs" "$pids" "$dir/etcd" "$dir/volumes"
# The API server listens where pods reach it: on the real node's bridge, or
# on loopback when there are only simulated nodes.
address=127.0.0.1
if [[ $real_node == true ]]; then
  if ! why=$(node_preflight); then
    echo "cluster-up: no cluster started: $why (CLUSTER_REAL_NODE=false starts one with simulated nodes only)" >&2
    exit 1
  fi
  node_network_up
  address=$node_ip
fi

# Certificates: one CA; a serving certificate for the API server; client
# certificates for the admin (system:masters) and each component. The
# aggregation layer has a CA of its own, as kubeadm makes it: the API server
# proxies to aggregated API servers (OLM's package server) with a client
# certificate that this CA signs and only they trust.
cert() { # name subject [extensions-file] [ca]
  local ca=${4:-ca}
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -subj "$2" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$ca.crt" -CAkey "$pki/$ca.key" -CAcreateserial \
    -days 3650 -out "$pki/$1.crt" ${3:+-extfile "$3"} 2>/dev/null
}
for ca in ca front-proxy-ca; do
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/$ca.key" -subj "/CN=kudo-ng-local-$ca" \
    -days 3650 -out "$pki/$ca.crt" 2>/dev/null
done
cert front-proxy-client "/CN=front-proxy-client" "" front-proxy-ca
cat >"$pki/apiserver.ext" <<EXT
subjectAltName = IP:127.0.0.1, IP:$address, IP:10.96.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage = serverAuth
EXT
cert apiserver "/CN=kube-apiserver" "$pki/apiserver.ext"
cert admin "/O=system:masters/CN=kubernetes-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert kwok "/O=system:masters/CN=kwok"
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

write_kubeconfig() { # file user
  "$kubectl" config set-cluster local --server "https://$address:$apiserver_port" \
    --certificate-authority "$pki/ca.crt" --embed-certs --kubeconfig "$1" >/dev/null
  "$kubectl" config set-credentials "$2" --client-certificate "$pki/$2.crt" --client-key "$pki/$2.key" \
    --embed-certs --kubeconfig "$1" >/dev/null
  "$kubectl" config set-context local --cluster local --user "$2" --kubeconfig "$1" >/dev/null
  "$kubectl" config use-context local --kubeconfig "$1" >/dev/null
}
write_kubeconfig "$kubeconfig" admin
for c in controller-manager scheduler kwok; do write_kubeconfig "$pki/$c.kubeconfig" "$c"; done
# kubectl and kubectl-kudo keep what an API server serves for hours, by its
# address: a new cluster at an old one's address would be taken for it (an
# old run's typed APIs listed in the kudo category, and `kubectl get kudo`
# failing on a kind this cluster does not serve).
rm -rf "${KUBECACHEDIR:-$HOME/.kube/cache}/discovery/${address}_$apiserver_port"
[[ $real_node == true ]] && node_certs

launch() { # name command...
  local name=$1
  shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$pids/$name.pid"
}

wait_for() { # what seconds command...
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "cluster-up: $what did not come up; see $logs" >&2
      tail -n 20 "$logs"/*.log >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

launch etcd "$assets/etcd" --name local --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "local=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync=true

# With no real node, the API server's only address is loopback, which the
# kubernetes Service's endpoints may not hold.
apiserver_flags=(--endpoint-reconciler-type none)
if [[ $real_node == true ]]; then
  # The kubernetes Service's endpoint is the bridge address; logs, exec and
  # cp reach the kubelet at the node's InternalIP, not by its name in DNS.
  apiserver_flags=(--kubelet-preferred-address-types InternalIP
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt"
    --kubelet-client-key "$pki/apiserver-kubelet-client.key")
fi
launch kube-apiserver "$assets/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address "$address" --advertise-address "$address" --secure-port "$apiserver_port" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" \
  --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-cluster-ip-range 10.96.0.0/16 --authorization-mode Node,RBAC --allow-privileged=true \
  --profiling="$profiling" "${apiserver_flags[@]}"
wait_for kube-apiserver 60 "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz

# Client limits and workers as a production control plane sets them, not the
# defaults (20 requests/s), so that hundreds of workloads roll out in seconds.
launch kube-controller-manager "$assets/kube-controller-manager" \
  --kube-api-qps 500 --kube-api-burst 1000 \
  --concurrent-deployment-syncs 20 --concurrent-replicaset-syncs 20 --concurrent-statefulset-syncs 20 \
  --kubeconfig "$pki/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$kcm_port" --leader-elect=false \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"

# kube-scheduler 1.34 now and then leaves a pod unschedulable after the claim
# it waited for is bound (1 in 36 StatefulSets of 6 claims under load here), until
# it flushes such pods: after 5 minutes by default, here after 10 s (the flush
# runs every 30 s).
launch kube-scheduler "$assets/kube-scheduler" \
  --kubeconfig "$pki/scheduler.kubeconfig" \
  --authentication-kubeconfig "$pki/scheduler.kubeconfig" \
  --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$scheduler_port" --leader-elect=false \
  --pod-max-in-unschedulable-pods-duration 10s

# kwok's node stages come unchanged from its module; the pod stages are ours
# (they add the failures tests ask for).
kwok_stages=$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/kustomize/stage
{
  cat "$kwok_stages/node/fast/node-initialize.yaml"
  echo "---"
  cat "$kwok_stages/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml"
  echo "---"
  cat "$root/hack/cluster/kwok-pod-stages.yaml"
} >"$dir/kwok-stages.yaml"
launch kwok "$root/bin/kwok" --kubeconfig "$pki/kwok.kubeconfig" --config "$dir/kwok-stages.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
  --cidr 10.0.0.0/24 --node-ip 10.0.0.1 --node-lease-duration-seconds 40 \
  --server-address "127.0.0.1:$kwok_port"

(cd "$root" && go build -o "$root/bin/hostpath-provisioner" ./hack/cluster/provisioner)
launch provisioner "$root/bin/hostpath-provisioner" --kubeconfig "$kubeconfig" --volume-dir "$dir/volumes"

{
  for i in $(seq 0 $((nodes - 1))); do
    cat <<NODE
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    kudo-ng.dev/simulated: "true"
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "$node_pods", ephemeral-storage: 1Ti}
  capacity: {cpu: "32", memory: 256Gi, pods: "$node_pods", ephemeral-storage: 1Ti}
---
NODE
  done
  cat <<SC
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kudo-ng.dev/hostpath
reclaimPolicy: Delete
volumeBindingMode: Immediate
SC
} | "$kubectl" --kubeconfig "$kubeconfig" apply -f - >/dev/null

((nodes == 0)) || wait_for "simulated nodes" 60 "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=1s
wait_for "the default ServiceAccount" 60 "$kubectl" --kubeconfig "$kubeconfig" get serviceaccount default
# A port of the cluster's range for a manager that serves webhooks outside it.
echo "WEBHOOK_PORT=$((base + 7))" >"$dir/ports.env"
[[ $real_node == true ]] && node_start
echo "cluster-up: ready in $((SECONDS - start))s" >&2
usage
