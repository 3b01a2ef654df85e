#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real Kubernetes on one machine: upstream etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler, and three simulated Ascend NPU
# nodes, each a real kubelet with its own containerd 2 (CDI on) and runc.
#
#   cluster.sh up BUILD_DIR    start it (make cluster); prints the KUBECONFIG
#   cluster.sh down            stop every process it started, remove what it made
#   cluster.sh status          whether it runs, and its KUBECONFIG
#
# Sourced (by tests/cluster/e2e.sh) it only defines functions.
#
# How one machine holds three nodes:
# - Network: one network namespace of its own, "ascend-k8s". The control
#   plane listens there on 127.0.0.1 and 10.224.0.1; node k is 10.224.0.1k, all
#   on a bridge with no ports (the sandboxes have no dummy interfaces; a
#   kubelet refuses a loopback node IP); node k's pods are on a CNI bridge
#   "cni-nk" with 10.244.k.0/24. Nothing touches the host's network: the
#   host reaches the API server through a relay from 127.0.0.1:$CLUSTER_PORT
#   over a unix socket (socat), so KUBECONFIG works from the host's shell.
# - Files: the device plugin directory is /var/lib/kubelet/device-plugins
#   whatever the kubelet's --root-dir says, and the DaemonSet's hostPaths are
#   the same on every node, so each node gets a mount namespace of its own in
#   which its own directories are bind-mounted over /dev, /var/lib/kubelet,
#   /usr/local/Ascend (the DCMI simulator as libdcmi.so and its state file),
#   /etc/cdi, /var/run/cdi, /etc/cni/net.d, /var/lib/cni, /var/log/pods,
#   /run/containerd, NFD's features.d and the plugin's --state-dir (its record
#   of separated chips is per node). Its containerd and kubelet run
#   there, so runc resolves a pod's hostPath to that node's files.
# - cgroups: the development machines have hybrid cgroups (v1 controllers
#   under a tmpfs) and no systemd, so the kubelet runs with the cgroupfs driver,
#   without QoS cgroups (cgroupsPerQOS: false, which requires
#   enforceNodeAllocatable: []) and with failCgroupV1: false (since 1.35 it
#   refuses cgroup v1 otherwise).
# - Images: nothing is pulled. The pause and busybox test images are built
#   from busybox-static (tests/cluster/node.sh) and, with the plugin's image
#   (make image's tar, as the guide's `docker load`), imported into each node
#   with `ctr -n k8s.io images import`.
#
# Everything lives under $CLUSTER_DIR (default /tmp/ascend-k8s); processes are
# recorded by PID there and stopped by PID. The mount points it needs on the
# host (empty directories such as /var/lib/kubelet) are created only where
# missing, recorded, and removed again by `down`.

CLUSTER_DIR=${CLUSTER_DIR:-/tmp/ascend-k8s}
CLUSTER_NETNS=${CLUSTER_NETNS:-ascend-k8s}
CLUSTER_PORT=${CLUSTER_PORT:-6443}
CLUSTER_NODES=(npu-node-1 npu-node-2 npu-node-3)
CLUSTER_CP_IP=10.224.0.1
CLUSTER_SERVICE_CIDR=10.96.0.0/16
CLUSTER_WAIT_S=${CLUSTER_WAIT_S:-120}
# The host directories each node has its own copy of (see above).
CLUSTER_NODE_DIRS=(/dev /var/lib/kubelet /usr/local/Ascend /etc/cdi /var/run/cdi /etc/cni/net.d /var/lib/cni
	/var/log/pods /run/containerd /etc/kubernetes/node-feature-discovery/features.d /var/lib/ascend-device-plugin)

_cl_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_cl_root=$(cd "$_cl_here/../.." && pwd)
# shellcheck source=node.sh
. "$_cl_root/tests/cluster/node.sh"

_cl_err() { echo "cluster: $*" >&2; return 1; }
_cl_log() { echo "cluster: $*" >&2; }

cluster_node_ip() { echo "10.224.0.1$1"; }            # K (1-3)
cluster_node_name() { echo "${CLUSTER_NODES[$(($1 - 1))]}"; }
cluster_node_dir() { echo "$CLUSTER_DIR/nodes/n$1"; }   # K: the node's files (its "host")
cluster_kubeconfig() { echo "$CLUSTER_DIR/kubeconfig"; }

# Runs a command in the cluster's network namespace; with K, in node K's
# mount namespace too.
cluster_in_netns() { nsenter --net="/run/netns/$CLUSTER_NETNS" -- "$@"; }
cluster_in_node() { # K CMD...
	local k=$1
	shift
	nsenter --net="/run/netns/$CLUSTER_NETNS" --mount="$CLUSTER_DIR/ns/n$k" -- "$@"
}

cluster_running() { [ -f "$CLUSTER_DIR/pids/kube-apiserver" ] && _cl_alive kube-apiserver; }

_cl_alive() { # NAME: whether the process recorded as NAME runs (and is still the one we started)
	local f=$CLUSTER_DIR/pids/$1 pid start
	[ -f "$f" ] || return 1
	read -r pid start <"$f" || return 1
	[ -n "$pid" ] && [ "$(_cl_starttime "$pid")" = "$start" ]
}

_cl_starttime() { # PID: field 22 of /proc/PID/stat, which tells a reused PID apart
	local rest
	read -r rest 2>/dev/null <"/proc/$1/stat" || return 0
	rest=${rest##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo "${20}"
}

# _cl_spawn NAME LOG CMD...: starts CMD in its own session, records its PID.
_cl_spawn() {
	local name=$1 log=$2 pid
	shift 2
	setsid "$@" </dev/null >>"$log" 2>&1 &
	pid=$!
	disown "$pid" 2>/dev/null || true
	echo "$pid $(_cl_starttime "$pid")" >"$CLUSTER_DIR/pids/$name"
}

# _cl_stop NAME [MS]: TERM, then KILL after MS (default 10 s), with every descendant.
_cl_stop() {
	local name=$1 ms=${2:-10000} f=$CLUSTER_DIR/pids/$1 pid kids
	[ -f "$f" ] || return 0
	if _cl_alive "$name"; then
		read -r pid _ <"$f"
		kids=$(_e2e_descendants "$pid")
		# shellcheck disable=SC2086
		_e2e_kill_wait TERM "$ms" "$pid" || _e2e_kill_wait KILL 5000 "$pid" || true
		# shellcheck disable=SC2086
		_e2e_kill_wait KILL 5000 $kids || true
	fi
	rm -f "$f"
}

_cl_deadline_ms() { echo $(($(_e2e_now_ms) + ${1:-$CLUSTER_WAIT_S} * 1000)); }

# _cl_wait_http NAME URL CURL_ARGS...: waits until URL answers 200 (or NAME exits, or the deadline).
_cl_wait_http() {
	local name=$1 url=$2 deadline
	shift 2
	deadline=$(_cl_deadline_ms)
	# curl's own retry loop waits between attempts with backoff; the
	# connection cannot be watched for before the server listens.
	while (($(_e2e_now_ms) < deadline)); do
		_cl_alive "$name" || _cl_err "$name exited; last lines of its log:" "$(tail -n 15 "$CLUSTER_DIR/logs/$name.log")" || return
		if _cl_net curl -sf --max-time 5 --retry 10 --retry-connrefused --retry-delay 1 --retry-max-time 10 \
			"$@" "$url" >/dev/null 2>&1; then
			return 0
		fi
	done
	_cl_err "$name did not answer $url within ${CLUSTER_WAIT_S} s"
}

# ---- certificates --------------------------------------------------------------

_cl_cert() { # NAME CN O SANS(ext, or ""): a key and certificate signed by the cluster CA
	local p=$CLUSTER_DIR/pki name=$1 cn=$2 o=$3 sans=$4 subj
	subj="/CN=$cn"
	[ -z "$o" ] || subj="/O=$o$subj"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$p/$name.key" -subj "$subj" -out "$p/$name.csr" 2>/dev/null &&
		if [ -n "$sans" ]; then
			printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$sans" >"$p/$name.ext"
		else
			printf 'extendedKeyUsage=clientAuth\n' >"$p/$name.ext"
		fi &&
		openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 30 \
			-extfile "$p/$name.ext" -out "$p/$name.crt" 2>/dev/null && rm -f "$p/$name.csr" "$p/$name.ext"
}

_cl_kubeconfig() { # FILE SERVER CERT_NAME: a kubeconfig with the cluster CA and a client certificate
	local p=$CLUSTER_DIR/pki
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ascend-k8s
  cluster:
    server: $2
    certificate-authority: $p/ca.crt
users:
- name: $3
  user:
    client-certificate: $p/$3.crt
    client-key: $p/$3.key
contexts:
- name: ascend-k8s
  context: {cluster: ascend-k8s, user: $3}
current-context: ascend-k8s
EOF
}

_cl_pki() {
	local p=$CLUSTER_DIR/pki k
	mkdir -p "$p" && chmod 700 "$p" || return
	openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$p/ca.key" -subj "/CN=ascend-k8s-ca" -days 30 \
		-out "$p/ca.crt" 2>/dev/null || _cl_err "openssl could not make the CA" || return
	_cl_cert apiserver kube-apiserver "" \
		"IP:127.0.0.1,IP:$CLUSTER_CP_IP,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" &&
		_cl_cert admin admin system:masters "" &&
		_cl_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" &&
		_cl_cert controller-manager system:kube-controller-manager "" "" &&
		_cl_cert scheduler system:kube-scheduler "" "" || _cl_err "openssl could not make the certificates" || return
	for k in 1 2 3; do
		_cl_cert "node$k" "system:node:$(cluster_node_name "$k")" system:nodes "" ||
			_cl_err "openssl could not make node $k's certificate" || return
	done
	openssl genrsa -out "$p/sa.key" 2048 2>/dev/null && openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null ||
		_cl_err "openssl could not make the service account key" || return
	_cl_kubeconfig "$(cluster_kubeconfig)" "https://127.0.0.1:$CLUSTER_PORT" admin &&
		_cl_kubeconfig "$CLUSTER_DIR/admin.inner.kubeconfig" https://127.0.0.1:6443 admin &&
		_cl_kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" https://127.0.0.1:6443 controller-manager &&
		_cl_kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" https://127.0.0.1:6443 scheduler
}

# ---- the control plane ---------------------------------------------------------

_cl_netns() {
	ip netns add "$CLUSTER_NETNS" || _cl_err "cannot create network namespace $CLUSTER_NETNS" || return
	echo "$CLUSTER_NETNS" >"$CLUSTER_DIR/netns"
	cluster_in_netns ip link set lo up &&
		cluster_in_netns ip link add ascend-nodes type bridge &&
		cluster_in_netns ip link set ascend-nodes up &&
		cluster_in_netns ip addr add "$CLUSTER_CP_IP/24" dev ascend-nodes &&
		cluster_in_netns ip addr add "$(cluster_node_ip 1)/24" dev ascend-nodes &&
		cluster_in_netns ip addr add "$(cluster_node_ip 2)/24" dev ascend-nodes &&
		cluster_in_netns ip addr add "$(cluster_node_ip 3)/24" dev ascend-nodes &&
		# Pods reach each other across the nodes' bridges through this namespace.
		cluster_in_netns sysctl -qw net.ipv4.ip_forward=1 ||
		_cl_err "cannot set up the network in $CLUSTER_NETNS" || return
}

# The control plane runs in the cluster's network namespace, or with
# CLUSTER_HOST_NET=1 in the caller's own, on 127.0.0.1 only (a throwaway
# control plane for a test, such as tests/scripts/test_kube_apiserver.sh).
_cl_net_prefix=()
_cl_net() { # CMD...: CMD where the control plane runs
	_cl_net_set
	"${_cl_net_prefix[@]}" "$@"
}
_cl_net_set() {
	if [ "${CLUSTER_HOST_NET:-0}" = 1 ]; then
		_cl_net_prefix=()
	else
		_cl_net_prefix=(nsenter --net="/run/netns/$CLUSTER_NETNS" --)
	fi
}

# cluster_etcd_start BIN CLIENT_PORT PEER_PORT: etcd under $CLUSTER_DIR/etcd.
cluster_etcd_start() {
	local bin=$1 c=$2 peer=$3
	_cl_net_set
	mkdir -p "$CLUSTER_DIR/etcd" && chmod 700 "$CLUSTER_DIR/etcd" || return
	_cl_spawn etcd "$CLUSTER_DIR/logs/etcd.log" "${_cl_net_prefix[@]}" "$bin/etcd" \
		--name ascend-k8s --data-dir "$CLUSTER_DIR/etcd" \
		--listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
		--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "ascend-k8s=http://127.0.0.1:$peer" --unsafe-no-fsync --log-level warn || return
	_cl_wait_http etcd "http://127.0.0.1:$c/health"
}

# cluster_apiserver_start BIN PORT ETCD_CLIENT_PORT: kube-apiserver with the
# certificates of _cl_pki, until /readyz answers. Also how a test restarts it
# (after `_cl_stop kube-apiserver`).
# CLUSTER_APISERVER_EXTRA: more flags, split at spaces (scripts/bench-fleet.sh
# turns on audit logging with it).
cluster_apiserver_start() {
	local bin=$1 port=$2 etcd=$3 p=$CLUSTER_DIR/pki bind=0.0.0.0
	_cl_net_set
	[ "${CLUSTER_HOST_NET:-0}" != 1 ] || bind=127.0.0.1
	# shellcheck disable=SC2086 # CLUSTER_APISERVER_EXTRA is a list of flags
	_cl_spawn kube-apiserver "$CLUSTER_DIR/logs/kube-apiserver.log" "${_cl_net_prefix[@]}" "$bin/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$etcd" --bind-address="$bind" --secure-port="$port" \
		--advertise-address="$CLUSTER_CP_IP" --kubelet-preferred-address-types=InternalIP \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
		--kubelet-client-certificate="$p/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$p/apiserver-kubelet-client.key" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--service-cluster-ip-range="$CLUSTER_SERVICE_CIDR" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
		--feature-gates=ResourceHealthStatus=true ${CLUSTER_APISERVER_EXTRA:-} || return
	_cl_wait_http kube-apiserver "https://127.0.0.1:$port/readyz" --cacert "$p/ca.crt" \
		--cert "$p/admin.crt" --key "$p/admin.key"
}

_cl_control_plane() {
	local bin=$1 p=$CLUSTER_DIR/pki l=$CLUSTER_DIR/logs
	cluster_etcd_start "$bin" 2379 2380 || return
	cluster_apiserver_start "$bin" 6443 2379 || return

	# The host's way in: 127.0.0.1:$CLUSTER_PORT -> unix socket -> the
	# API server inside the namespace.
	_cl_spawn relay-netns "$l/relay.log" nsenter --net="/run/netns/$CLUSTER_NETNS" -- \
		socat "UNIX-LISTEN:$CLUSTER_DIR/apiserver.sock,fork,mode=600" TCP:127.0.0.1:6443 &&
		_cl_spawn relay-host "$l/relay.log" \
			socat "TCP-LISTEN:$CLUSTER_PORT,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$CLUSTER_DIR/apiserver.sock" ||
		return

	_cl_spawn kube-controller-manager "$l/kube-controller-manager.log" nsenter --net="/run/netns/$CLUSTER_NETNS" -- \
		"$bin/kube-controller-manager" --kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--authorization-kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
		--cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
		--use-service-account-credentials --leader-elect=false --bind-address=127.0.0.1 \
		--service-cluster-ip-range="$CLUSTER_SERVICE_CIDR" || return
	_cl_spawn kube-scheduler "$l/kube-scheduler.log" nsenter --net="/run/netns/$CLUSTER_NETNS" -- \
		"$bin/kube-scheduler" --kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--authentication-kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--authorization-kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--leader-elect=false --bind-address=127.0.0.1 || return
	_cl_wait_http kube-controller-manager https://127.0.0.1:10257/healthz -k &&
		_cl_wait_http kube-scheduler https://127.0.0.1:10259/healthz -k
}

# ---- the nodes -----------------------------------------------------------------

# The chips of each node, as DCMI simulator state.
_cl_node_state() { # K
	case $1 in
	1)
		# The example node, each chip with its RoCE address 192.168.1.1<phy>
		# (hccn_tool's, on a real server) and its link up.
		awk '/^chip phy=/ { sub(/^chip phy=/, ""); phy = $1 + 0; print "chip phy=" $0 " ip=192.168.1.1" phy "/24 link=up"; next } { print }' \
			"$_cl_root/tests/fake-dcmi/example-910b.state"
		;;
	2)
		# Eight 910B3 on cards that are not numbered 0-7 (a server whose card
		# slots skip numbers): ids are physical ids, never card ids. RoCE
		# addresses 192.168.2.1<phy>; chip 7's link is down (the multinode
		# step keeps it out of every rank table).
		echo "# npu-node-2: eight 910B3, card ids 0-3 and 8-11, npu-7's RoCE link down."
		echo "driver 24.1.rc1"
		echo "subscribe on"
		local i link cards=(0 1 2 3 8 9 10 11)
		for i in 0 1 2 3 4 5 6 7; do
			link=up
			[ "$i" = 7 ] && link=down
			echo "chip phy=$i card=${cards[$i]} logic=$i name=910B3 health=0 aicore=20 hbm_mb=65536 hbm_used_mb=3072 temp=41 power=96.5 util=0 ip=192.168.2.1$i/24 link=$link"
		done
		;;
	3)
		echo "# npu-node-3: a mixed node, chips 0-3 910B3 and 4-5 310P3, two vir04_3c vNPUs of chip 0."
		echo "driver 24.1.rc1"
		echo "subscribe on"
		local i
		for i in 0 1 2 3; do
			echo "chip phy=$i card=$i logic=$i name=910B3 health=0 aicore=20 hbm_mb=65536 hbm_used_mb=3072 temp=41 power=96.5 util=0"
		done
		echo "chip phy=4 card=4 logic=4 name=310P3 health=0 aicore=8 hbm_mb=24576 hbm_used_mb=1024 temp=40 power=40.5 util=0"
		echo "chip phy=5 card=5 logic=5 name=310P3 health=0 aicore=8 hbm_mb=24576 hbm_used_mb=1024 temp=40 power=40.5 util=0"
		echo "vnpu id=100 phy=0 template=vir04_3c"
		echo "vnpu id=101 phy=0 template=vir04_3c"
		;;
	esac
}

_cl_node_files() { # K BUILD: the node's "host" directories
	local k=$1 build=$2 n d i
	n=$(cluster_node_dir "$k")
	node_create "$n" "$build" >/dev/null || return
	# node_create makes eight davinci nodes; node 3 has six chips and two vNPUs.
	if [ "$k" = 3 ]; then
		rm -f "$n/dev/davinci6" "$n/dev/davinci7" &&
			mknod -m 0660 "$n/dev/vdavinci100" c "$E2E_NPU_MAJOR" 5 &&
			mknod -m 0660 "$n/dev/vdavinci101" c "$E2E_NPU_MAJOR" 7 &&
			chown "0:$E2E_NPU_GID" "$n/dev/vdavinci100" "$n/dev/vdavinci101" || return
	fi
	# The kubelet's OOM watcher reads /dev/kmsg.
	mknod -m 0644 "$n/dev/kmsg" c 1 11 || return
	_cl_node_state "$k" >"$(node_state_file "$n")" || return
	for d in "${CLUSTER_NODE_DIRS[@]}"; do
		mkdir -p "$n$d" || return
	done
	mkdir -p "$n/containerd" "$n/var/lib/kubelet/pki" || return
	# CNI: a bridge per node, its own subnet, no NAT (nothing leaves the namespace).
	cat >"$n/etc/cni/net.d/10-ascend-k8s.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$(cluster_node_name "$k")",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni-n$k",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "10.244.$k.0/24"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
}

# The mount namespace of node K: a private copy of the host's mounts with the
# node's directories bound over the host's. Kept alive by a bind mount of
# its nsfs file under $CLUSTER_DIR/ns (a private mount, so the binds do not
# propagate).
_cl_node_ns() { # K
	local k=$1 n d script
	n=$(cluster_node_dir "$k")
	script="set -e"
	for d in "${CLUSTER_NODE_DIRS[@]}"; do
		[ "$d" = /dev ] && continue
		script+="; mount --bind '$n$d' '$d'"
	done
	# /dev last: the node's device nodes, with the host's pts and a shm of its own.
	script+="; mount --bind /dev/pts '$n/dev/pts'; mount -t tmpfs -o mode=1777,size=64m shm '$n/dev/shm'"
	script+="; mount -t mqueue mqueue '$n/dev/mqueue' || true; mount --bind '$n/dev' /dev"
	# Mounts made in the node (containers' rootfs, volumes) propagate among
	# the node's own processes as on a normal host, and never to the host.
	script+="; mount --make-rshared /"
	touch "$CLUSTER_DIR/ns/n$k" &&
		unshare --mount="$CLUSTER_DIR/ns/n$k" --propagation private -- sh -c "$script" ||
		_cl_err "cannot make node $k's mount namespace" || return
}

_cl_containerd_config() { # K
	local k=$1 c
	c=$(cluster_node_dir "$k")/containerd
	cat <<EOF
# Written by tests/cluster/cluster.sh: the containerd of $(cluster_node_name "$k").
version = 3
root = "$c/root"
state = "$c/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$c/containerd.sock"

[ttrpc]
  address = "$c/containerd.sock.ttrpc"

[plugins.'io.containerd.internal.v1.opt']
  path = "$c/opt"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$E2E_PAUSE_IMAGE"

[plugins.'io.containerd.cri.v1.runtime']
  # CDI is on by default in containerd 2; said here because the tests rely on it.
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
  disable_apparmor = true
  restrict_oom_score_adj = true
  # Pods' network namespaces under state: /run/netns is one directory for
  # every mount namespace, and the host's `ip netns` must not list them.
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "/etc/cni/net.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false

[plugins.'io.containerd.grpc.v1.cri']
  # Exec, attach and port-forward: the kubelet proxies to this server.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
}

_cl_kubelet_config() { # K
	local k=$1 c ip
	c=$(cluster_node_dir "$k")
	ip=$(cluster_node_ip "$k")
	cat <<EOF
# Written by tests/cluster/cluster.sh: the kubelet of $(cluster_node_name "$k").
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $CLUSTER_DIR/pki/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$c/containerd/containerd.sock
# No systemd on the test machines, and hybrid cgroups: see the top of cluster.sh.
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failCgroupV1: false
failSwapOn: false
# The kubelets share the machine's disk: no image garbage collection (the
# images were imported, nothing could pull them again) and no disk eviction.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "0%"
  imagefs.available: "0%"
# ConfigMap volumes follow an edit within seconds (the sharing test).
syncFrequency: 10s
# The kubelet posts a device plugin's health change with the node's next
# status update, not at once: 1 s instead of the default 10 s, so the fault
# test measures the plugin and the kubelet rather than this period.
nodeStatusUpdateFrequency: 1s
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
featureGates:
  ResourceHealthStatus: true
EOF
}

cluster_containerd_start() { # K BIN
	local k=$1 bin=$2 c name deadline
	c=$(cluster_node_dir "$k")/containerd
	name=containerd-n$k
	_cl_containerd_config "$k" >"$c/config.toml" || return
	_cl_spawn "$name" "$CLUSTER_DIR/logs/$name.log" env PATH="$bin:$_e2e_path" \
		nsenter --net="/run/netns/$CLUSTER_NETNS" --mount="$CLUSTER_DIR/ns/n$k" -- \
		"$bin/containerd" --config "$c/config.toml" || return
	deadline=$(_cl_deadline_ms 60)
	# Serving, with its CRI plugin loaded (containerd serves even when a
	# plugin failed).
	until [ -S "$c/containerd.sock" ] && timeout 5 "$bin/ctr" --address "$c/containerd.sock" plugins ls 2>/dev/null |
		awk '$2 == "cri" && $4 == "ok" { found = 1 } END { exit !found }'; do
		_cl_alive "$name" || _cl_err "$name exited:" "$(tail -n 15 "$CLUSTER_DIR/logs/$name.log")" || return
		(($(_e2e_now_ms) < deadline)) || _cl_err "$name does not serve $c/containerd.sock" || return
		# Woken by the socket's creation; the timeout bounds how late an exit is seen.
		inotifywait -qq -t 1 -e create "$c" >/dev/null 2>&1 || true
	done
}

cluster_kubelet_start() { # K BIN
	local k=$1 bin=$2 n name
	n=$(cluster_node_dir "$k")
	name=kubelet-n$k
	_cl_kubelet_config "$k" >"$n/kubelet.yaml" &&
		_cl_kubeconfig "$n/kubelet.kubeconfig" "https://$CLUSTER_CP_IP:6443" "node$k" || return
	_cl_spawn "$name" "$CLUSTER_DIR/logs/$name.log" env PATH="$bin:$_e2e_path" \
		nsenter --net="/run/netns/$CLUSTER_NETNS" --mount="$CLUSTER_DIR/ns/n$k" -- \
		"$bin/kubelet" --config="$n/kubelet.yaml" --kubeconfig="$n/kubelet.kubeconfig" \
		--hostname-override="$(cluster_node_name "$k")" --node-ip="$(cluster_node_ip "$k")" --v=2
}

cluster_kubelet_stop() { _cl_stop "kubelet-n$1" 10000; } # K

_cl_node_start() { # K BIN BUILD IMAGES...
	local k=$1 bin=$2 build=$3
	shift 3
	_cl_node_files "$k" "$build" && _cl_node_ns "$k" && cluster_containerd_start "$k" "$bin" || return
	# Once more after a failure: the import waits for containerd's events,
	# and a containerd still starting its plugins may not send them yet.
	images_import "$(cluster_node_dir "$k")/containerd/containerd.sock" "$@" >/dev/null 2>>"$CLUSTER_DIR/logs/images.log" ||
		images_import "$(cluster_node_dir "$k")/containerd/containerd.sock" "$@" >/dev/null 2>>"$CLUSTER_DIR/logs/images.log" ||
		_cl_err "importing images into node $k failed:" "$(grep -v DEPRECATION "$CLUSTER_DIR/logs/images.log" | tail -n 5)" || return
	cluster_kubelet_start "$k" "$bin"
}

# cluster_up BUILD [IMAGE_TAR...]: the whole cluster; extra docker-archives
# are imported into every node.
cluster_up() {
	local build=${1:?cluster_up BUILD} bin k t0=$SECONDS
	shift
	[ "$(id -u)" -eq 0 ] || _cl_err "needs root (namespaces, mounts, mknod)" || return
	if cluster_running; then
		_cl_err "a cluster already runs (KUBECONFIG=$(cluster_kubeconfig)); 'make cluster-down' stops it"
		return 3
	fi
	[ ! -e "$CLUSTER_DIR" ] || cluster_down || return
	[ -f "$build/image/ascend-device-plugin.tar" ] || _cl_err "no $build/image/ascend-device-plugin.tar (make image)" || return
	bin=$("$_cl_root/scripts/cluster-bins.sh" | tail -n 1) || _cl_err "building the components failed" || return
	if cluster_in_netns true 2>/dev/null || ip netns list | grep -qw "$CLUSTER_NETNS"; then
		_cl_err "network namespace $CLUSTER_NETNS exists but no cluster runs: remove it with 'ip netns del $CLUSTER_NETNS'" || return
	fi
	if ss -Hltn "sport = :$CLUSTER_PORT" | grep -q .; then
		_cl_err "127.0.0.1:$CLUSTER_PORT is in use: set CLUSTER_PORT" || return
	fi
	mkdir -p "$CLUSTER_DIR"/{pids,logs,ns,images,nodes} && chmod 755 "$CLUSTER_DIR" || return
	echo "$bin" >"$CLUSTER_DIR/bin"
	# ctr and kubectl are the cluster's own from here on.
	PATH=$bin:$PATH
	# The nsfs bind mounts need a private parent.
	mount --bind "$CLUSTER_DIR/ns" "$CLUSTER_DIR/ns" && mount --make-private "$CLUSTER_DIR/ns" || return
	# Mount points on the host, made only where missing and remembered.
	for d in "${CLUSTER_NODE_DIRS[@]}"; do
		[ -e "$d" ] && continue
		mkdir -p "$d" && echo "$d" >>"$CLUSTER_DIR/made-on-host" || return
	done
	images_build "$CLUSTER_DIR/images" >/dev/null || _cl_err "building the test images failed" || return
	_cl_pki && _cl_netns && _cl_control_plane "$bin" || return
	for k in 1 2 3; do
		_cl_node_start "$k" "$bin" "$build" "$CLUSTER_DIR/images/pause.tar" "$CLUSTER_DIR/images/busybox.tar" \
			"$CLUSTER_DIR/images/inference.tar" "$build/image/ascend-device-plugin.tar" "$@" || return
	done
	# A node exists once its kubelet registered it; then it turns Ready.
	"$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" wait --for=create --timeout="${CLUSTER_WAIT_S}s" \
		"${CLUSTER_NODES[@]/#/node/}" >/dev/null &&
		"$bin/kubectl" --kubeconfig "$(cluster_kubeconfig)" wait --for=condition=Ready --timeout="${CLUSTER_WAIT_S}s" \
			"${CLUSTER_NODES[@]/#/node/}" >/dev/null || {
		_cl_err "the nodes did not become Ready; kubelet logs in $CLUSTER_DIR/logs"
		return 1
	}
	echo "$((SECONDS - t0))" >"$CLUSTER_DIR/up-seconds"
}

# cluster_rss_kb: the resident memory of the whole cluster, in KiB: every
# process it started, the shims and every container under them. Shared pages
# count once per process, so this overstates a little.
cluster_rss_kb() {
	local f pid pids=() kb total=0
	for f in "$CLUSTER_DIR"/pids/*; do
		[ -f "$f" ] && read -r pid _ <"$f" && pids+=("$pid")
	done
	# shellcheck disable=SC2207
	pids+=($(_e2e_pids_naming "$CLUSTER_DIR/nodes/"))
	# shellcheck disable=SC2207
	pids+=($(_e2e_descendants "${pids[@]}"))
	for pid in $(printf '%s\n' "${pids[@]}" | sort -u); do
		kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || continue
		total=$((total + ${kb:-0}))
	done
	echo "$total"
}

# cluster_down: stops everything, by PID, and removes what it made. Idempotent.
cluster_down() {
	local k f rc=0 d
	[ -d "$CLUSTER_DIR" ] || return 0
	for k in 1 2 3; do
		_cl_stop "kubelet-n$k" 10000
	done
	# Each node's containers: everything under its containerd (shims and
	# their containers) goes with it; the namespace's mounts go with the
	# namespace.
	for k in 1 2 3; do
		_cl_stop "containerd-n$k" 10000
		# Shims re-parent to init: find them by the socket they name.
		# shellcheck disable=SC2046
		_e2e_kill_wait KILL 5000 $(_e2e_descendants $(_e2e_pids_naming "$(cluster_node_dir "$k")/containerd/")) || rc=1
		# shellcheck disable=SC2046
		_e2e_kill_wait KILL 5000 $(_e2e_pids_naming "$(cluster_node_dir "$k")/containerd/") || rc=1
	done
	for f in kube-scheduler kube-controller-manager relay-host relay-netns kube-apiserver etcd; do
		_cl_stop "$f" 10000
	done
	for f in "$CLUSTER_DIR"/ns/n*; do
		[ -e "$f" ] && { umount "$f" 2>/dev/null || umount -l "$f" 2>/dev/null || true; }
	done
	umount "$CLUSTER_DIR/ns" 2>/dev/null || umount -l "$CLUSTER_DIR/ns" 2>/dev/null || true
	if [ -f "$CLUSTER_DIR/netns" ]; then
		ip netns del "$(cat "$CLUSTER_DIR/netns")" 2>/dev/null || true
	fi
	if [ -f "$CLUSTER_DIR/made-on-host" ]; then
		tac "$CLUSTER_DIR/made-on-host" | while read -r d; do
			rmdir -p --ignore-fail-on-non-empty "$d" 2>/dev/null || true
		done
	fi
	if _e2e_mounts_under "$CLUSTER_DIR" | grep -q .; then
		_cl_err "still mounted under $CLUSTER_DIR, not removing it:" "$(_e2e_mounts_under "$CLUSTER_DIR" | tr '\n' ' ')"
		return 1
	fi
	rm -rf --one-file-system -- "$CLUSTER_DIR" || rc=1
	return $rc
}

_cl_main() {
	set -uo pipefail
	case ${1-} in
	up)
		[ $# -ge 2 ] || { echo "usage: $0 up BUILD_DIR" >&2; exit 2; }
		local st=0
		cluster_up "$(cd "$2" && pwd)" || st=$?
		if ((st == 3)); then exit 1; fi
		if ((st != 0)); then
			_cl_log "start failed; stopping what was started"
			cluster_down
			exit 1
		fi
		echo "cluster: 3 nodes Ready in $(cat "$CLUSTER_DIR/up-seconds") s ($("$(cat "$CLUSTER_DIR/bin")/kubectl" version --client -o json | jq -r .clientVersion.gitVersion)); logs in $CLUSTER_DIR/logs"
		echo "export KUBECONFIG=$(cluster_kubeconfig)"
		echo "export PATH=$(cat "$CLUSTER_DIR/bin"):\$PATH"
		;;
	down) cluster_down ;;
	status)
		if cluster_running; then
			echo "running: export KUBECONFIG=$(cluster_kubeconfig)"
		else
			echo "not running"
			exit 1
		fi
		;;
	*)
		echo "usage: $0 up BUILD_DIR | down | status" >&2
		exit 2
		;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	_cl_main "$@"
fi
