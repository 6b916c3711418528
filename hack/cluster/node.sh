# shellcheck shell=bash
# The local control plane's real node: containerd, the CNI bridge, kubelet and
# kube-proxy, so that containers really run (the kwok nodes only pretend).
# Sourced by up.sh and down.sh, which set root, dir, pki, logs, pids, assets,
# base and kubectl.
#
# It is tainted kudo-ng.dev/real=true:NoSchedule, so that the workloads of
# packages keep landing on the simulated nodes and only what tolerates the
# taint runs here; and labelled kudo-ng.dev/real=true to be selected. Without
# the taint (CLUSTER_REAL_NODE_TAINT=false) and with no simulated nodes,
# everything runs here: OLM's bundle-unpack Jobs tolerate no taint.
#
# Network safety, by construction: pods reach nothing off this machine. The
# bridge has no masquerade; pods get routes to the pod and Service ranges
# only, no default route; the filter table drops whatever would be forwarded
# between the bridge and another interface; the pods' one nameserver is the
# cluster's DNS (node_dns_start), which answers cluster names only; and
# images are only those imported here or pushed to
# the cluster's own registry (node_registry_start), the one registry
# containerd pulls from.
#
# One real node per machine: the bridge and kube-proxy's rules are the
# machine's. The bridge's alias names the cluster directory that owns it.

node_name=kudo-ng-node
node_bridge=kudong0
node_pod_cidr=10.244.0.0/24
node_ip=10.244.0.1
node_service_cidr=10.96.0.0/16
node_taint=kudo-ng.dev/real
node_packages=(containerd runc containernetworking-plugins busybox-static iptables conntrack)
node_guard=KUDO-NG-NODE
# The images every pod sandbox and our own test pods use, made by node_images
# from Debian's busybox-static and the toolchain's kubectl.
node_busybox_image=kudo-ng.local/busybox:1
node_pause_image=kudo-ng.local/pause:1
node_kubectl_image=kudo-ng.local/kubectl:v$KUBERNETES_VERSION
# The cluster's OCI registry, on the bridge: like the bridge, one per machine.
node_registry=$node_ip:5000

node_dir() { echo "$dir/node"; }
node_socket() { echo "$(node_dir)/containerd.sock"; }

# stop_component stops a process of the cluster by its pid file.
stop_component() { # name
  local pidfile=$dir/pids/$1.pid pid
  [[ -f $pidfile ]] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

# node_preflight prints, in one line, why this machine cannot run the real
# node, and fails; it installs the Debian packages it needs when missing.
node_preflight() {
  if [[ $(id -u) != 0 ]]; then
    echo "the real node needs root (containerd, kubelet and the pod network)"
    return 1
  fi
  if [[ ! -d /sys/fs/cgroup/memory && ! -f /sys/fs/cgroup/cgroup.controllers ]]; then
    echo "the real node needs cgroups, and /sys/fs/cgroup has none"
    return 1
  fi
  if ! grep -qw overlay /proc/filesystems; then
    echo "the real node needs overlayfs, which this kernel lacks"
    return 1
  fi
  local missing=()
  for p in "${node_packages[@]}"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "cluster-up: installing ${missing[*]} for the real node" >&2
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >"$logs/apt.log" 2>&1; then
      echo "the real node needs the Debian packages ${missing[*]}, and apt-get could not install them (see $logs/apt.log)"
      return 1
    fi
  fi
  for c in "$assets/kubelet" "$assets/kube-proxy" "$root/bin/registry" "$root/bin/coredns"; do
    if [[ ! -x $c ]]; then
      echo "the real node needs $c: run make cluster-tools"
      return 1
    fi
  done
  local owner
  if owner=$(ip -o link show "$node_bridge" 2>/dev/null); then
    owner=${owner##*alias }
    if [[ -f $owner/pids/kubelet.pid ]] && kill -0 "$(cat "$owner/pids/kubelet.pid")" 2>/dev/null; then
      [[ $owner == "$dir" ]] && return 0
      echo "another local cluster's real node runs on this machine ($owner): stop it with make cluster-down first"
      return 1
    fi
    # A cluster whose processes were killed (a session that ended, a
    # reboot's leftovers) leaves its network behind.
    echo "cluster-up: removing what the stopped real node of $owner left" >&2
    (dir=$owner && node_down)
  fi
}

# node_network_up makes the bridge with the node's address, before the API
# server binds it, and the filter rules that keep pods on this machine.
node_network_up() {
  mkdir -p "$(node_dir)"
  ip link add "$node_bridge" type bridge
  ip link set "$node_bridge" alias "$dir"
  ip addr add "$node_ip/${node_pod_cidr#*/}" dev "$node_bridge"
  ip link set "$node_bridge" up
  # The host reaches Service addresses through kube-proxy's rules on the
  # bridge, never through the default route.
  ip route add "$node_service_cidr" dev "$node_bridge" src "$node_ip"
  # kube-proxy needs bridged traffic to pass iptables and forwarding on; both
  # are put back by node_down.
  echo "$(cat /proc/sys/net/ipv4/ip_forward) $(cat /proc/sys/net/bridge/bridge-nf-call-iptables)" >"$dir/sysctl.saved"
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
  echo 1 >/proc/sys/net/ipv4/ip_forward
  iptables -w -N "$node_guard"
  iptables -w -A "$node_guard" -i "$node_bridge" ! -o "$node_bridge" -j DROP
  iptables -w -A "$node_guard" -o "$node_bridge" ! -i "$node_bridge" -j DROP
  iptables -w -I FORWARD -j "$node_guard"
}

# node_images writes a docker archive of the busybox, pause and kubectl
# images: one busybox layer, and kubectl's on top of it for the last.
node_images() { # archive
  local work applet
  work=$(mktemp -d)
  mkdir -p "$work/busybox/bin" "$work/busybox/etc" "$work/busybox/tmp" "$work/kubectl/bin"
  cp /bin/busybox "$work/busybox/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ $applet == busybox ]] || ln -s busybox "$work/busybox/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$work/busybox/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$work/busybox/etc/group"
  chmod 1777 "$work/busybox/tmp"
  cp "$kubectl" "$work/kubectl/bin/kubectl"
  local layer
  for layer in busybox kubectl; do
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/$layer" -cf "$work/$layer.tar" .
  done
  diff_id() { echo "\"sha256:$(sha256sum "$work/$1.tar" | cut -d' ' -f1)\""; }
  image_config() { # name command-json layers...
    local name=$1 command=$2 ids=()
    shift 2
    for layer in "$@"; do ids+=("$(diff_id "$layer")"); done
    printf '{"architecture":"%s","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/bin"],"Cmd":%s},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
      "$(go env GOARCH)" "$command" "$(IFS=,; echo "${ids[*]}")" >"$work/$name.json"
  }
  image_config busybox '["sh"]' busybox
  # A sandbox only holds the pod's namespaces: it sleeps.
  image_config pause '["sleep","inf"]' busybox
  image_config kubectl '["kubectl"]' busybox kubectl
  printf '[%s,%s,%s]' \
    "{\"Config\":\"busybox.json\",\"RepoTags\":[\"$node_busybox_image\"],\"Layers\":[\"busybox.tar\"]}" \
    "{\"Config\":\"pause.json\",\"RepoTags\":[\"$node_pause_image\"],\"Layers\":[\"busybox.tar\"]}" \
    "{\"Config\":\"kubectl.json\",\"RepoTags\":[\"$node_kubectl_image\"],\"Layers\":[\"busybox.tar\",\"kubectl.tar\"]}" \
    >"$work/manifest.json"
  tar -C "$work" -cf "$1" manifest.json busybox.json pause.json kubectl.json busybox.tar kubectl.tar
  rm -rf "$work"
}

node_certs() {
  # The registry's CA, its own: what trusts the registry trusts nothing else.
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/registry-ca.key" -subj "/CN=kudo-ng-local-registry-ca" \
    -days 3650 -out "$pki/registry-ca.crt" 2>/dev/null
  printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$node_ip" >"$pki/registry.ext"
  cert registry "/CN=kudo-ng-local-registry" "$pki/registry.ext" registry-ca
  cert kubelet "/O=system:nodes/CN=system:node:$node_name"
  cert kube-proxy "/CN=system:kube-proxy"
  # The API server's client certificate for logs, exec and port-forward.
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  write_kubeconfig "$pki/kubelet.kubeconfig" kubelet
  write_kubeconfig "$pki/kube-proxy.kubeconfig" kube-proxy
}

# node_registry_start starts the reference registry (distribution) on the
# bridge, its blobs under the node's directory, and waits until it answers.
# It listens on the bridge's address only, so what is pushed and pulled
# never leaves this machine. It speaks TLS, with a certificate of the
# cluster's registry CA (pki/registry-ca.crt), which its clients trust:
# containerd, the image tool, opm, and operator-sdk, which reads an index
# image over TLS only.
node_registry_start() {
  local rd
  rd=$(node_dir)/registry
  mkdir -p "$rd/storage"
  cat >"$rd/config.yaml" <<YAML
version: 0.1
log:
  level: info
  # Every request is logged once already.
  accesslog: {disabled: true}
storage:
  filesystem: {rootdirectory: $rd/storage}
  delete: {enabled: true}
http:
  addr: $node_registry
  tls: {certificate: $pki/registry.crt, key: $pki/registry.key}
  # Signs the state of unfinished uploads; one instance, so any value.
  secret: $(openssl rand -hex 16)
  headers:
    X-Content-Type-Options: [nosniff]
YAML
  # A server listening on every address would answer for it.
  if curl -s -o /dev/null -m 2 "http://$node_registry/" || curl -sk -o /dev/null -m 2 "https://$node_registry/"; then
    echo "cluster-up: something on this machine already listens on port ${node_registry#*:} of every address, where the cluster's registry goes" >&2
    return 1
  fi
  # The registry exports traces over OTLP by default, to a collector that
  # is not there.
  launch registry env OTEL_TRACES_EXPORTER=none "$root/bin/registry" serve "$rd/config.yaml"
  wait_for registry 30 curl -fsS -o /dev/null --cacert "$pki/registry-ca.crt" "https://$node_registry/v2/"
}

# node_dns_start starts the cluster's DNS, CoreDNS, on the bridge: the pods'
# one nameserver. It answers the names of Services and pods (cluster.local)
# from the API server, and refuses every other name: it forwards nothing off
# this machine. OLM needs it: its operators reach a catalog by the name of
# its Service.
node_dns_start() {
  cat >"$(node_dir)/Corefile" <<COREFILE
.:53 {
  bind $node_ip
  errors
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $kubeconfig
    pods insecure
  }
  cache 30
}
COREFILE
  launch coredns "$root/bin/coredns" -conf "$(node_dir)/Corefile"
  wait_for "the cluster's DNS" 30 node_dns_listens
}

node_dns_listens() { ss -Hlun "sport = :53" | grep -q "$node_ip:53"; }

# node_start starts the registry, the DNS, containerd, kubelet and kube-proxy
# once the API server is up, and waits for the node to be Ready.
node_start() {
  local nd sock kubelet_starts
  local -a kubelet_command
  nd=$(node_dir)
  sock=$(node_socket)
  mkdir -p "$nd/cni" "$nd/kubelet" "$nd/pod-logs" "$nd/certs.d/$node_registry"
  node_registry_start
  node_dns_start
  # containerd pulls from the cluster's registry, trusting its CA; every
  # other registry is unreachable from here anyway, and gets no host entry.
  cat >"$nd/certs.d/$node_registry/hosts.toml" <<TOML
server = "https://$node_registry"

[host."https://$node_registry"]
  capabilities = ["pull", "resolve"]
  ca = "$pki/registry-ca.crt"
TOML
  cat >"$nd/containerd.toml" <<TOML
version = 2
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$node_pause_image"
  # Sessions here lack CAP_SYS_RESOURCE: a sandbox's oom_score_adj of -998
  # would make runc fail.
  restrict_oom_score_adj = true
  # Pods' network namespaces live under the state directory, so that
  # cluster-down finds and unmounts them.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$nd/certs.d"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
TOML
  # Routes to the pod and Service ranges only: no default route, no
  # masquerade.
  cat >"$nd/cni/10-kudo-ng.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "kudo-ng",
  "plugins": [{
    "type": "bridge",
    "bridge": "$node_bridge",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$nd/ipam",
      "ranges": [[{"subnet": "$node_pod_cidr", "gateway": "$node_ip"}]],
      "routes": [{"dst": "$node_service_cidr", "gw": "$node_ip"}]
    }
  }, {"type": "loopback"}]
}
JSON
  # What pods that do not use the cluster's DNS (dnsPolicy Default) get:
  # their own loopback, where nothing answers; a resolv.conf without a
  # nameserver would make containerd copy the machine's.
  echo "nameserver 127.0.0.1" >"$nd/resolv.conf"
  launch containerd containerd --config "$nd/containerd.toml"
  wait_for containerd 30 ctr --address "$sock" version
  node_images "$nd/images.tar"
  ctr --address "$sock" -n k8s.io images import "$nd/images.tar" >/dev/null

  local taints=""
  [[ $real_node_taint == false ]] || taints="{key: $node_taint, value: \"true\", effect: NoSchedule}"
  cat >"$nd/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: $((base + 20))
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((base + 21))
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
resolvConf: $nd/resolv.conf
clusterDNS: [$node_ip]
clusterDomain: cluster.local
podLogsDir: $nd/pod-logs
registerWithTaints: [$taints]
# Most images (those imported) cannot be pulled again here: never collect
# them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
YAML
  kubelet_command=("$assets/kubelet" --config "$nd/kubelet.yaml" --kubeconfig "$pki/kubelet.kubeconfig"
    --root-dir "$nd/kubelet" --hostname-override "$node_name" --node-ip "$node_ip"
    --node-labels "$node_taint=true")
  kubelet_starts=1
  launch kubelet "${kubelet_command[@]}"

  cat >"$nd/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $pki/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $node_name
bindAddress: $node_ip
clusterCIDR: $node_pod_cidr
healthzBindAddress: 127.0.0.1:$((base + 22))
metricsBindAddress: 127.0.0.1:$((base + 23))
nodePortAddresses: [$node_ip/32]
iptables: {localhostNodePorts: false}
# Leave the machine's conntrack settings as they are.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
  launch kube-proxy "$assets/kube-proxy" --config "$nd/kube-proxy.yaml"
  wait_for "the real node" 90 node_ready
  wait_for "kube-proxy's rules for the kubernetes Service" 60 node_proxies_kubernetes
}

# node_ready says whether the real node is Ready, and starts kubelet again
# (twice at most) when it died on the way: kubelet 1.34 may panic as it
# starts, when its DRA plugin manager asks for the node before the container
# manager runs (an upstream race), which the next start does not meet. The
# log of the start that died is kept beside.
node_ready() {
  if ! running kubelet && ((kubelet_starts < 3)); then
    mv "$logs/kubelet.log" "$logs/kubelet-$kubelet_starts.log"
    kubelet_starts=$((kubelet_starts + 1))
    launch kubelet "${kubelet_command[@]}"
  fi
  "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready "node/$node_name" --timeout=1s
}

node_proxies_kubernetes() { iptables -w -t nat -S KUBE-SERVICES | grep -q "default/kubernetes:https cluster IP"; }

# node_down stops the real node and removes what it made: containers,
# mounts, network namespaces, cgroups, the bridge and the iptables rules.
node_down() {
  local nd
  nd=$(node_dir)
  stop_component kube-proxy
  stop_component kubelet
  # Every container's processes are in the kubepods cgroups: kill them, so
  # that the shims exit.
  local cg
  for cg in /sys/fs/cgroup/*/kubepods; do
    [[ -d $cg ]] || continue
    find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  done
  stop_component containerd
  stop_component registry
  stop_component coredns
  pkill -9 -f -- "$nd/" 2>/dev/null || true
  # Deepest first: rootfs overlays, pod volumes, network namespaces.
  # A node that never ran a pod has none of them: grep finds nothing.
  # findmnt names them by their physical path, which differs where bin/ is
  # a symlink (a git worktree sharing another's bin/).
  local physical
  physical=$(cd "$nd" 2>/dev/null && pwd -P) || physical=$nd
  { findmnt -rn -o TARGET | grep "^$physical/" || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for cg in /sys/fs/cgroup/*/kubepods; do
    if [[ -d $cg ]]; then
      find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    fi
  done
  find /var/log/containers -maxdepth 1 -lname "$nd/*" -delete 2>/dev/null || true
  rm -f /var/lib/cni/results/kudo-ng-* 2>/dev/null || true
  if [[ -x $assets/kube-proxy ]] && iptables -w -t nat -nL KUBE-SERVICES >/dev/null 2>&1; then
    "$assets/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
  # The kubelet's own chains, which it leaves behind.
  local tool table chain
  for tool in iptables ip6tables; do
    for table in filter nat mangle; do
      for chain in INPUT OUTPUT; do
        while "$tool" -w -t "$table" -D "$chain" -j KUBE-FIREWALL 2>/dev/null; do :; done
      done
      for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        "$tool" -w -t "$table" -F "$chain" 2>/dev/null && "$tool" -w -t "$table" -X "$chain"
      done
    done
  done
  if iptables -w -nL "$node_guard" >/dev/null 2>&1; then
    iptables -w -D FORWARD -j "$node_guard"
    iptables -w -F "$node_guard"
    iptables -w -X "$node_guard"
  fi
  ip link del "$node_bridge" 2>/dev/null || true
  if [[ -f $dir/sysctl.saved ]]; then
    local forward bridged
    read -r forward bridged <"$dir/sysctl.saved"
    echo "$forward" >/proc/sys/net/ipv4/ip_forward
    echo "$bridged" >/proc/sys/net/bridge/bridge-nf-call-iptables
  fi
}
