# shellcheck shell=bash
# start_manager ROOT CLUSTER_DIR LOG [FLAG...]: builds bin/manager and runs it
# against the local control plane of CLUSTER_DIR, with its admission webhooks
# on loopback (hack/webhook-local.sh), started as hack/cluster/up.sh starts
# the control plane, so that hack/cluster/down.sh stops it too. Returns when
# the webhooks answer: the API server calls them from the first write on.
# Needs KUBECONFIG and KUBECTL.
start_manager() {
  local root=$1 dir=$2 log=$3
  shift 3
  (cd "$root" && go build -o bin/manager .)
  local port
  port=$(sed -n 's/^WEBHOOK_PORT=//p' "$dir/ports.env")
  WEBHOOK_DIR=$dir/webhook WEBHOOK_PORT=$port "$root/hack/webhook-local.sh"
  setsid "$root/bin/manager" --kubeconfig "$KUBECONFIG" --health-probe-bind-address=0 \
    --webhook-cert-dir "$dir/webhook" --webhook-host 127.0.0.1 --webhook-port "$port" "$@" \
    >"$log" 2>&1 </dev/null &
  echo $! >"$dir/pids/manager.pid"
  for _ in $(seq 300); do
    curl -sk -o /dev/null "https://127.0.0.1:$port/" && return
    sleep 0.2
  done
}
