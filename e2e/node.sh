#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, for the e2e suite, the smoke test and the demo:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd (runc, CNI bridge),
# kubelet and kube-proxy, all inside a network namespace this script creates with no route out
# of the machine. docs/e2e.md says what runs where and why.
#
#   e2e/node.sh run [--keep] -- COMMAND...   start the node, run COMMAND with the node's
#                                            variables exported (E2E_NODE_ENV and what it holds),
#                                            then tear everything down (also on failure and Ctrl-C)
#                                            and exit with COMMAND's status; --keep leaves the node
#                                            running for debugging (stop it with `down`)
#   e2e/node.sh down DIR                     tear down a node left by --keep (DIR is in its env)
#   e2e/node.sh restart DIR NAME [--down S] [--with-containers]
#                                            from inside a run (faults for tests): SIGKILL one of
#                                            the node's daemons (etcd, kube-apiserver,
#                                            kube-controller-manager, kube-scheduler, containerd,
#                                            kubelet, kube-proxy), wait S seconds (default 0), start
#                                            it again with its recorded command line, and wait
#                                            until it answers; --with-containers (containerd only)
#                                            also kills every shim and container process of the node
#   e2e/node.sh reboot DIR [--down S]        from inside a run: the whole node crashes and comes
#                                            back: every daemon, shim and container killed, every
#                                            mount under DIR and its loop devices gone, containerd's
#                                            state (a tmpfs /run on a real node) cleared, then the
#                                            daemons started again in order and the node Ready
#
# The components come from e2e/build.sh (E2E_COMPONENTS_ENV, built when unset) and the images
# from e2e/images.sh (E2E_IMAGES_DIR, built when unset); every image is imported into containerd
# before COMMAND starts. One node per machine at a time: a second `run` waits for the first.
#
# Network: namespace $netns holds everything; a veth pair links it to the host namespace only
# (host end $host_ip/30, node end $node_ip/30), so host processes (the e2e binary, the tests,
# the demo) reach the API server at https://$node_ip:6443. The namespace has no default route;
# this is checked before anything starts and again once the node is up, and the run fails if not.
#
# Teardown kills only processes this script started (their pids are recorded in DIR/pids, plus
# the containerd shims and container processes of this node, found by this node's containerd
# socket and cgroup root), unmounts everything under DIR, deletes the namespace and the cgroups,
# and removes what kubelet, containerd and the CNI plugins create outside DIR when they were not
# there before. It then checks and reports anything left.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

netns=csi-rz-e2e
host_if=rz-e2e-host
node_if=rz-e2e-node
host_ip=10.250.250.1
node_ip=10.250.250.2
pod_cidr=10.244.0.0/24
service_cidr=10.96.0.0/24
node_name=e2e-node
cgroup_root=csi-resizer-e2e
lock=/tmp/csi-resizer-e2e-node.lock

log() { echo "[e2e/node $(date +%H:%M:%S)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() { sed -n '5,27p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
# Teardown. Works from the files in DIR alone, so `down DIR` can finish a node left by --keep.

# A recorded pid is this node's only while its command line names the node's directory (every
# process node.sh starts has DIR in its arguments): after a reboot, or long after an interrupted
# run, the number may belong to someone else.
node_pid() { # dir pid
  kill -0 "$2" 2>/dev/null && tr '\0' ' ' 2>/dev/null <"/proc/$2/cmdline" | grep -qF -- "$1"
}

kill_pid() { # pid name: SIGTERM, wait up to 15 s, then SIGKILL (only a pid of the node in $dir)
  local pid=$1 name=$2 i
  node_pid "$dir" "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  log "$name (pid $pid) ignored SIGTERM for 15 s; SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

# Pids whose command line mentions this node's containerd socket: the shims of this node only.
# One grep over every command line finds the candidates (a process per pid would take seconds on
# a busy machine); each is then checked for the shim's `-address SOCKET`.
node_shims() { # dir
  local f pid
  for f in $(grep -lsF -- "$1/run/containerd.sock" /proc/[0-9]*/cmdline); do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    if tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "-address $1/run/containerd.sock"; then echo "$pid"; fi
  done
  return 0
}

# Every pid in this node's cgroups (the pods' processes), over all v1 hierarchies.
node_cgroup_pids() {
  local d
  for d in /sys/fs/cgroup/*/"$cgroup_root"; do
    [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}

down() { # dir
  local dir=$1 name pid m t=$SECONDS steps=""
  [ -d "$dir" ] || die "no node directory $dir"
  log "tearing down the node in $dir"
  # Seconds per step, said once at the end: a slow teardown shows where its time went.
  step() { steps+="$1 $((SECONDS - t))s, "; t=$SECONDS; }
  local crictl=""
  [ -f "$dir/node.env" ] && crictl=$(sed -n 's/^CRICTL_BIN=//p' "$dir/node.env")

  # 1. Nothing may start new pods: controllers, scheduler and kubelet go first.
  for name in kube-controller-manager kube-scheduler kubelet; do
    [ -f "$dir/pids/$name" ] && kill_pid "$(cat "$dir/pids/$name")" "$name"
  done
  step "controllers and kubelet"
  # 2. containerd removes every pod it runs (CNI DEL, netns, mounts, shims) while it still runs.
  if [ -n "$crictl" ] && [ -f "$dir/pids/containerd" ] && kill -0 "$(cat "$dir/pids/containerd")" 2>/dev/null; then
    timeout 120 nsenter --net="/run/netns/$netns" "$crictl" --runtime-endpoint "unix://$dir/run/containerd.sock" \
      --timeout 60s rmp --all --force >/dev/null 2>&1 || log "crictl rmp did not finish cleanly; continuing"
  fi
  step "pods removed"
  # 3. The rest, last started first: the API server before etcd.
  for name in kube-proxy containerd kube-apiserver etcd; do
    [ -f "$dir/pids/$name" ] && kill_pid "$(cat "$dir/pids/$name")" "$name"
  done
  # 4. Shims and container processes of this node that outlived containerd.
  for pid in $(node_shims "$dir"); do kill_pid "$pid" containerd-shim; done
  for pid in $(node_cgroup_pids); do kill -KILL "$pid" 2>/dev/null || true; done
  step "daemons and shims"

  # 5. Mounts under DIR (kubelet's volumes and its self bind mount, overlay rootfs, shm), the
  #    deepest first; pod network namespaces containerd created during this run.
  unmount_under "$dir"
  if [ -f "$dir/state/netns-before" ]; then
    for m in /run/netns/cni-*; do
      [ -e "$m" ] || continue
      grep -qxF "$m" "$dir/state/netns-before" && continue
      umount "$m" 2>/dev/null || true
      rm -f "$m"
    done
  fi
  # 5b. Loop devices backed by files under DIR (the loopfs test driver's volumes), now that
  #     nothing mounts them.
  for m in $(node_loops "$dir"); do
    if losetup --detach "$m" 2>/dev/null; then log "detached loop device $m"; else log "could not detach $m"; fi
  done
  step "mounts and loop devices"
  # 6. The namespace (its end of the veth pair goes with it, and so does the host end).
  if ip netns list | grep -qw "^$netns"; then ip netns del "$netns"; fi
  ip link del "$host_if" 2>/dev/null || true # normally gone with its peer already
  if [ -f "$dir/state/created-run-netns" ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
    umount /run/netns 2>/dev/null || true
    rmdir /run/netns 2>/dev/null || true
  fi
  # 7. cgroups: leaves first.
  local d
  for d in /sys/fs/cgroup/*/"$cgroup_root"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  # 8. What kubelet, containerd and the CNI plugins create outside DIR: removed when this run
  #    created it (recorded at start-up), or only this node's entries when it was there before.
  local path
  for path in /var/lib/kubelet /var/lib/cni /run/containerd /usr/libexec/kubernetes /var/lib/csi-hostpath-data; do
    if [ -f "$dir/state/created$(echo "$path" | tr / _)" ]; then rm -rf "$path"; fi
  done
  [ -d /var/lib/cni/results ] && find /var/lib/cni/results -name "csi-resizer-e2e-*" -delete 2>/dev/null || true
  step "namespace, cgroups, files"

  # 9. Anything left is reported; the directory goes only when nothing is.
  local left=()
  for name in "$dir"/pids/*; do
    [ -f "$name" ] && node_pid "$dir" "$(cat "$name")" && left+=("process $(basename "$name") $(cat "$name")")
  done
  for pid in $(node_shims "$dir"); do left+=("shim $pid"); done
  grep -qF " $dir" /proc/self/mountinfo && left+=("mounts: $(awk -v d="$dir" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | tr '\n' ' ')")
  for m in $(node_loops "$dir"); do left+=("loop device $m"); done
  ip netns list | grep -qw "^$netns" && left+=("network namespace $netns")
  for d in /sys/fs/cgroup/*/"$cgroup_root"; do [ -d "$d" ] && left+=("cgroup $d"); done
  if [ "${#left[@]}" -gt 0 ]; then
    log "LEFT BEHIND: ${left[*]}"
    return 1
  fi
  if [ -n "${E2E_KEEP_LOGS:-}" ]; then
    mkdir -p "$E2E_KEEP_LOGS" && cp -r "$dir/logs/." "$E2E_KEEP_LOGS/"
    log "logs kept in $E2E_KEEP_LOGS"
  fi
  rm -rf "$dir"
  step "logs kept, directory removed"
  log "teardown steps: ${steps%, }"
  log "teardown complete: no processes, mounts, loop devices, namespace or cgroups left"
}

# Loop devices whose backing file is under DIR. Matched by inode, not by the path losetup shows:
# a device attached inside a container shows the path as that container saw it. The inodes under
# DIR are listed in one walk, however many devices there are.
node_loops() { # dir
  local dir_dev candidates inodes dev ino
  dir_dev=$(stat -c '%Hd:%Ld' "$1")
  candidates=$(losetup --list --noheadings --output NAME,BACK-INO,BACK-MAJ:MIN 2>/dev/null | awk -v d="$dir_dev" '$3 == d && $2 != "" {print $1, $2}')
  [ -n "$candidates" ] || return 0
  inodes=$(find "$1" -xdev -type f -printf '%i\n' 2>/dev/null | sort -u)
  while read -r dev ino; do
    if grep -qx -- "$ino" <<<"$inodes"; then echo "$dev"; fi
  done <<<"$candidates"
  return 0
}

unmount_under() { # dir: every mount point under it, deepest first, repeated while any remain
  local dir=$1 pass m
  for pass in 1 2 3 4 5; do
    mapfile -t mounts < <(awk -v d="$dir" 'index($5, d"/") == 1 || $5 == d {print $5}' /proc/self/mountinfo | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-)
    [ "${#mounts[@]}" -eq 0 ] && return 0
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || { [ "$pass" -ge 3 ] && umount -l "$m" 2>/dev/null; } || true; done
  done
}

# A node this script started earlier and never tore down: one left by --keep (marked
# DIR/state/kept) stops this run with the command that ends it; one left by a run that was killed
# outright (SIGKILL, a lost machine session: no trap runs) is torn down here, and the run stops
# if that leaves anything behind. Called with the node lock held, so no live run owns either.
clear_leftovers() {
  local old
  for old in /var/tmp/rz-e2e.??????; do
    [ -d "$old" ] || continue
    if [ -f "$old/state/kept" ]; then
      die "a node kept with --keep is still up in $old; stop it first: e2e/node.sh down $old"
    fi
    log "found a node left by an interrupted run in $old; tearing it down first"
    ( dir=$old; down "$old" ) || die "could not clear the node left in $old (see LEFT BEHIND above)"
  done
  # No directory to work from, but its namespace or veth is still there.
  if ip netns list | grep -qw "^$netns" || ip link show "$host_if" >/dev/null 2>&1; then
    die "network namespace $netns or interface $host_if exists with no node directory under /var/tmp;
remove them by hand once nothing uses them: ip netns del $netns; ip link del $host_if"
  fi
}

# ---------------------------------------------------------------------------------------------
# Start-up.

wait_for() { # what seconds process command...: polls every 0.2 s while the process (a name in DIR/pids) lives
  local what=$1 seconds=$2 process=$3 i; shift 3
  local logfile=$dir/logs/$process.log
  for i in $(seq $((seconds * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$(cat "$dir/pids/$process")" 2>/dev/null; then
      log "$process exited while waiting for $what; last lines of $logfile:"
      tail -n 40 "$logfile" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  log "$what not ready after ${seconds}s; last lines of $logfile:"
  tail -n 40 "$logfile" >&2 || true
  return 1
}

# Whether a daemon of the node answers: etcd's /health, the API server's /readyz, containerd's CRI,
# kubelet's /healthz; the other daemons have nothing this script waits for, so running is enough.
answers() { # name
  case $1 in
    etcd)
      nsenter --net="/run/netns/$netns" \
        bash -c 'exec 3<>/dev/tcp/127.0.0.1/2379 && printf "GET /health HTTP/1.0\r\n\r\n" >&3 && grep -q "\"health\":\"true\"" <&3' ;;
    kube-apiserver) [ "$("$dir/bin/kubectl" --kubeconfig="$dir/pki/admin.kubeconfig" get --raw /readyz 2>/dev/null)" = ok ] ;;
    containerd) nsenter --net="/run/netns/$netns" "$dir/bin/crictl" --runtime-endpoint "unix://$dir/run/containerd.sock" info ;;
    kubelet)
      nsenter --net="/run/netns/$netns" \
        bash -c 'exec 3<>/dev/tcp/127.0.0.1/10248 && printf "GET /healthz HTTP/1.0\r\n\r\n" >&3 && grep -qx ok <&3' ;;
    *) kill -0 "$(cat "$dir/pids/$1")" ;;
  esac
}

start() { # name logfile command...: started in the node's namespace, pid and command line recorded
  local name=$1 logfile=$2; shift 2
  # What `restart` and `reboot` start again: the log, the command line (NUL-separated), and PATH
  # (containerd finds its shim there).
  printf '%s\0' "$logfile" "$@" >"$dir/cmds/$name"
  printf '%s' "$PATH" >"$dir/cmds/$name.path"
  # 8>&-: the node lock stays this script's; a daemon outliving a killed run must not hold it.
  # </dev/null: a daemon started again from a test's process must not hold that process's pipes.
  nsenter --net="/run/netns/$netns" "$@" >>"$logfile" 2>&1 </dev/null 8>&- &
  echo $! >"$dir/pids/$name"
  log "started $name (pid $!)"
  # Out of the job table: a daemon a fault kills is not reported as "Killed" by this shell.
  disown $! 2>/dev/null || true
}

# Fails loudly unless the node's namespace has no default route and no route to a public address.
check_isolation() {
  local routes
  routes=$(ip -n "$netns" -4 route show)
  if ip -n "$netns" -4 route show default | grep -q . || ip -n "$netns" -6 route show default 2>/dev/null | grep -q .; then
    die "the node's namespace $netns has a default route; refusing to go on:
$routes"
  fi
  if ip -n "$netns" route get 192.0.2.1 >/dev/null 2>&1 || ip -n "$netns" route get 8.8.8.8 >/dev/null 2>&1; then
    die "the node's namespace $netns routes to addresses outside the machine:
$routes"
  fi
  log "isolation checked: namespace $netns has no default route (routes: $(echo "$routes" | tr '\n' ';'))"
}

make_pki() {
  local pki=$dir/pki
  mkdir -p "$pki"
  (
    cd "$pki"
    ossl() { openssl "$@" 2>/dev/null; }
    ossl ecparam -name prime256v1 -genkey -noout -out ca.key
    ossl req -x509 -new -key ca.key -days 2 -subj "/CN=csi-resizer-e2e-ca" -out ca.crt
    cert() { # name subject san [extendedKeyUsage]
      ossl ecparam -name prime256v1 -genkey -noout -out "$1.key"
      ossl req -new -key "$1.key" -subj "$2" -out "$1.csr"
      printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s\n' \
        "$4" "${3:+subjectAltName=$3}" >"$1.ext"
      ossl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt"
      rm -f "$1.csr" "$1.ext"
    }
    cert apiserver "/CN=kube-apiserver" \
      "IP:$node_ip,IP:127.0.0.1,IP:${service_cidr%.0/*}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost" serverAuth
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "" clientAuth
    cert kubelet "/CN=$node_name" "IP:$node_ip,DNS:$node_name" serverAuth
    ossl genrsa -out sa.key 2048
    ossl rsa -in sa.key -pubout -out sa.pub
    : >tokens.csv
    local user group token
    for entry in "admin|system:masters" "system:node:$node_name|system:nodes" "system:kube-controller-manager|" \
      "system:kube-scheduler|" "system:kube-proxy|"; do
      group=${entry#*|}
      user=${entry%|*}
      token=$(openssl rand -hex 24)
      if [ -n "$group" ]; then echo "$token,$user,$user,\"$group\"" >>tokens.csv; else echo "$token,$user,$user" >>tokens.csv; fi
      cat >"$(echo "${user#system:}" | tr : -).kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$node_ip:6443", certificate-authority: "$pki/ca.crt"}
users:
- name: u
  user: {token: "$token"}
contexts:
- name: e2e
  context: {cluster: e2e, user: u}
current-context: e2e
EOF
    done
    chmod 600 ./*.key tokens.csv ./*.kubeconfig
  )
}

up() {
  # shellcheck disable=SC1090
  source "$E2E_COMPONENTS_ENV"
  local bin=$dir/bin
  mkdir -p "$dir"/{pids,cmds,logs,state,etc,bin,run,cni/net.d,kubelet,containerd,flexvolume,etcd,loopfs}
  # containerd finds its shim on PATH; one directory with exactly what this node runs.
  ln -s "$CONTAINERD_DIR/containerd" "$CONTAINERD_DIR/containerd-shim-runc-v2" "$CONTAINERD_DIR/ctr" "$bin/"
  ln -s "$CRICTL_BIN" "$bin/crictl"
  ln -s "$KUBECTL_BIN" "$bin/kubectl"

  # What exists before, so teardown removes only what this run created.
  local path
  # (/var/lib/csi-hostpath-data: a hostPath of the csi-hostpath driver's manifest that the e2e
  # framework does not move under kubelet's root.)
  for path in /var/lib/kubelet /var/lib/cni /run/containerd /usr/libexec/kubernetes /var/lib/csi-hostpath-data; do
    [ -e "$path" ] || : >"$dir/state/created$(echo "$path" | tr / _)"
  done
  [ -d /run/netns ] || : >"$dir/state/created-run-netns"
  ls -d /run/netns/cni-* 2>/dev/null >"$dir/state/netns-before" || true

  # --- network namespace, veth pair to the host, isolation check --------------------------
  ip netns list | grep -qw "^$netns" && die "network namespace $netns exists (a node left by --keep? e2e/node.sh down DIR)"
  ip link show "$host_if" >/dev/null 2>&1 && die "interface $host_if exists (a node left by --keep?)"
  if ip -4 -o addr show | grep -q "inet ${host_ip%.*}\."; then die "${host_ip%.*}.0/24 is already in use on this host"; fi
  ip netns add "$netns"
  ip link add "$host_if" type veth peer name "$node_if"
  ip link set "$node_if" netns "$netns"
  ip addr add "$host_ip/30" dev "$host_if"
  ip link set "$host_if" up
  ip -n "$netns" link set lo up
  ip -n "$netns" addr add "$node_ip/30" dev "$node_if"
  ip -n "$netns" link set "$node_if" up
  check_isolation

  make_pki
  local pki=$dir/pki

  # --- etcd and kube-apiserver -------------------------------------------------------------
  start etcd "$dir/logs/etcd.log" "$ETCD_BIN" --name=e2e --data-dir="$dir/etcd" \
    --listen-client-urls=http://127.0.0.1:2379 --advertise-client-urls=http://127.0.0.1:2379 \
    --listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=e2e=http://127.0.0.1:2380 --unsafe-no-fsync=true --log-level=warn
  wait_for etcd 60 etcd answers etcd

  start kube-apiserver "$dir/logs/kube-apiserver.log" "$KUBE_APISERVER_BIN" \
    --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --advertise-address="$node_ip" --secure-port=6443 \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" --client-ca-file="$pki/ca.crt" \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --service-cluster-ip-range="$service_cidr" --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --authorization-mode=Node,RBAC --token-auth-file="$pki/tokens.csv" --allow-privileged=true --v=1
  local kubectl=("$bin/kubectl" --kubeconfig="$pki/admin.kubeconfig")
  wait_for "kube-apiserver /readyz" 120 kube-apiserver answers kube-apiserver

  # --- controllers -------------------------------------------------------------------------
  start kube-controller-manager "$dir/logs/kube-controller-manager.log" "$KUBE_CONTROLLER_MANAGER_BIN" \
    --kubeconfig="$pki/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig="$pki/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="$pki/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --service-cluster-ip-range="$service_cidr" --allocate-node-cidrs=false --v=1
  start kube-scheduler "$dir/logs/kube-scheduler.log" "$KUBE_SCHEDULER_BIN" \
    --kubeconfig="$pki/kube-scheduler.kubeconfig" --authentication-kubeconfig="$pki/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$pki/kube-scheduler.kubeconfig" --bind-address=127.0.0.1 --leader-elect=false --v=1

  # --- containerd --------------------------------------------------------------------------
  local pause_image
  pause_image=$(sed -n 's/^PAUSE_IMAGE=//p' "$E2E_IMAGES_DIR/images.env")
  cat >"$dir/etc/containerd.toml" <<EOF
version = 3
root = '$dir/containerd/root'
state = '$dir/run/containerd'
[grpc]
  address = '$dir/run/containerd.sock'
[ttrpc]
  address = '$dir/run/containerd.sock.ttrpc'
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$pause_image'
  [plugins.'io.containerd.cri.v1.runtime']
    # runc cannot lower oom_score_adj here (root lacks CAP_SYS_RESOURCE): clamp it instead.
    restrict_oom_score_adj = true
    # Pod network namespaces under this node's directory, not /run/netns.
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$RUNC_BIN'
        Root = '$dir/run/runc'
        SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['$CNI_BIN_DIR']
      conf_dir = '$dir/cni/net.d'
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
EOF
  cat >"$dir/cni/net.d/10-csi-resizer-e2e.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "csi-resizer-e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$dir/run/cni-ipam", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
  PATH="$bin:$PATH" start containerd "$dir/logs/containerd.log" "$bin/containerd" --config "$dir/etc/containerd.toml"
  local crictl=("$bin/crictl" --runtime-endpoint "unix://$dir/run/containerd.sock")
  wait_for "containerd CRI" 60 containerd answers containerd

  # --- images --------------------------------------------------------------------------------
  local tar
  for tar in "$E2E_IMAGES_DIR"/*.tar; do
    "$bin/ctr" --address "$dir/run/containerd.sock" -n k8s.io images import "$tar" >/dev/null
  done
  log "imported $(ls "$E2E_IMAGES_DIR"/*.tar | wc -l) images"

  # --- kubelet -------------------------------------------------------------------------------
  # Its cgroup root (every pod's cgroups go under it, so teardown finds them all) must exist in
  # every v1 hierarchy; cpuset needs its CPUs and memory nodes before a task may join below it.
  local hierarchy
  for hierarchy in /sys/fs/cgroup/*/; do
    [ -f "$hierarchy/cgroup.procs" ] && [ "$(basename "$hierarchy")" != unified ] || continue
    mkdir -p "$hierarchy$cgroup_root"
  done
  cp /sys/fs/cgroup/cpuset/cpuset.cpus "/sys/fs/cgroup/cpuset/$cgroup_root/cpuset.cpus"
  cp /sys/fs/cgroup/cpuset/cpuset.mems "/sys/fs/cgroup/cpuset/$cgroup_root/cpuset.mems"
  echo "nameserver 127.0.0.1" >"$dir/etc/resolv.conf"
  cat >"$dir/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$cgroup_root
failSwapOn: false
containerRuntimeEndpoint: unix://$dir/run/containerd.sock
address: $node_ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $pki/ca.crt}}
authorization: {mode: Webhook}
resolvConf: $dir/etc/resolv.conf
clusterDomain: cluster.local
volumePluginDir: $dir/flexvolume
syncFrequency: ${E2E_KUBELET_SYNC_FREQUENCY:-10s}
maxPods: ${E2E_KUBELET_MAX_PODS:-110}
volumeStatsAggPeriod: ${E2E_KUBELET_VOLUME_STATS_PERIOD:-10s}
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
  start kubelet "$dir/logs/kubelet.log" "$KUBELET_BIN" --config="$dir/etc/kubelet.yaml" \
    --kubeconfig="$pki/node-$node_name.kubeconfig" --root-dir="$dir/kubelet" \
    --hostname-override="$node_name" --node-ip="$node_ip" --v=2

  # --- kube-proxy ----------------------------------------------------------------------------
  cat >"$dir/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: $pod_cidr
hostnameOverride: $node_name
bindAddress: $node_ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clientConnection: {kubeconfig: $pki/kube-proxy.kubeconfig}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy "$dir/logs/kube-proxy.log" "$KUBE_PROXY_BIN" --config="$dir/etc/kube-proxy.yaml" --v=1

  wait_for "node $node_name Ready" 120 kubelet bash -c \
    "${kubectl[*]} get node $node_name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  wait_for "the default service account" 60 kube-controller-manager "${kubectl[@]}" -n default get serviceaccount default
  check_isolation

  cat >"$dir/node.env" <<EOF
E2E_NODE_DIR=$dir
E2E_NODE_NETNS=/run/netns/$netns
E2E_NODE_NAME=$node_name
E2E_NODE_IP=$node_ip
E2E_API_URL=https://$node_ip:6443
E2E_KUBECONFIG=$pki/admin.kubeconfig
E2E_KUBELET_ROOT_DIR=$dir/kubelet
E2E_CONTAINERD_SOCKET=$dir/run/containerd.sock
E2E_LOG_DIR=$dir/logs
E2E_LOOPFS_DIR=$dir/loopfs
KUBECTL_BIN=$bin/kubectl
CTR_BIN=$bin/ctr
CRICTL_BIN=$bin/crictl
EOF
  log "node $node_name Ready in $((SECONDS - started))s; API https://$node_ip:6443, kubeconfig $pki/admin.kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# Faults, for tests, on a node that a `run` holds: its command calls these with the node's DIR.
# Every daemon started again is started from the command line `start` recorded, appends to the
# same log and has its new pid recorded, so the teardown stops it like the first one.

daemons=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)

running_node() { # dir: the node must be up (its env written) and not torn down
  [ -f "$1/node.env" ] && [ -d "$1/cmds" ] || die "$1 is not the directory of a running node (no node.env or cmds/)"
}

kill_daemon() { # name: SIGKILL, then wait (bounded) until it is gone
  local pid i
  pid=$(cat "$dir/pids/$1")
  node_pid "$dir" "$pid" || { log "$1 (pid $pid) was not running"; return 0; }
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "$1 (pid $pid) still runs 10 s after SIGKILL"
}

start_again() { # name: from its recorded command line, then wait until it answers
  local name=$1 logfile
  local -a argv
  [ -f "$dir/cmds/$name" ] || die "no recorded command line for $name"
  mapfile -d '' argv <"$dir/cmds/$name"
  logfile=${argv[0]}
  echo "=== $(date -u +%FT%T.%NZ) e2e/node.sh starts $name again" >>"$logfile"
  PATH=$(cat "$dir/cmds/$name.path") start "$name" "$logfile" "${argv[@]:1}"
  wait_for "$name to answer" 120 "$name" answers "$name"
}

# Every shim and container process of this node, SIGKILLed at once; bounded wait until none is left.
kill_containers() {
  local pid i left
  # shellcheck disable=SC2046 # one pid a word
  kill -KILL $(node_shims "$dir") $(node_cgroup_pids) 2>/dev/null || true
  for i in $(seq 100); do
    # Again each time: a shim containerd was starting when it died comes up after the first kill.
    left="$(node_cgroup_pids) $(node_shims "$dir")"
    [ -z "${left// /}" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    sleep 0.1
  done
  die "container processes or shims still running 10 s after SIGKILL: $(node_cgroup_pids | tr '\n' ' ') shims: $(node_shims "$dir" | tr '\n' ' ')"
}

# SIGKILL to several daemons at once, then a bounded wait until each is gone.
kill_daemons() { # name...
  local name pid pids=() i
  for name in "$@"; do
    pid=$(cat "$dir/pids/$name")
    if node_pid "$dir" "$pid"; then pids+=("$pid"); else log "$name (pid $pid) was not running"; fi
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill -KILL "${pids[@]}" 2>/dev/null || true
  for i in $(seq 100); do
    local alive=no
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=yes; done
    [ "$alive" = no ] && return 0
    sleep 0.1
  done
  die "still running 10 s after SIGKILL: ${pids[*]}"
}

restart_daemon() { # name down-seconds with-containers
  local name=$1 down=$2 containers=$3 t0=$SECONDS
  printf '%s\n' "${daemons[@]}" | grep -qx -- "$name" || die "unknown daemon $name; one of: ${daemons[*]}"
  [ "$containers" = no ] || [ "$name" = containerd ] || die "--with-containers goes with containerd only"
  if [ "$containers" = no ]; then
    kill_daemon "$name"
  else
    # containerd and everything it ran go together, as when a restart takes its whole cgroup.
    local pid
    pid=$(cat "$dir/pids/$name")
    if node_pid "$dir" "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    kill_containers
    kill_daemon "$name"
  fi
  log "$name killed$([ "$containers" = no ] || echo ', with every container of the node'); down ${down}s"
  sleep "$down"
  start_again "$name"
  log "$name answers again, $((SECONDS - t0))s after the kill"
}

# A crash of the whole node: everything it runs ends at once, as at a power cut (the page cache
# survives: this machine does not really restart), then it boots: what lives in /run on a real
# node (containerd's state, runc's, the pods' network namespaces, the IPAM leases) is gone,
# every mount and loop device of the node too; the data on disk (etcd's, containerd's images,
# kubelet's directory, the volumes' files) stays. Then the daemons start in the order `up` uses.
reboot_node() { # down-seconds
  local down=$1 t0=$SECONDS name m d
  kill_daemons "${daemons[@]}"
  kill_containers
  log "node crashing: every daemon and container process ended ($((SECONDS - t0))s)"
  unmount_under "$dir"
  if grep -qF " $dir/" /proc/self/mountinfo; then die "mounts under $dir survived the crash: $(awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | tr '\n' ' ')"; fi
  log "node crashing: every mount under $dir gone ($((SECONDS - t0))s)"
  for m in $(node_loops "$dir"); do losetup --detach "$m" || die "could not detach $m"; done
  find "$dir/run" -mindepth 1 -delete
  for d in /sys/fs/cgroup/*/"$cgroup_root"; do
    if [ -d "$d" ]; then find "$d" -mindepth 1 -depth -type d -delete 2>/dev/null || true; fi
  done
  log "node crashed: daemons, containers, mounts and loop devices gone; down ${down}s"
  sleep "$down"
  check_isolation
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy; do start_again "$name"; done
  wait_for "node $node_name Ready" 180 kubelet bash -c \
    "$dir/bin/kubectl --kubeconfig=$dir/pki/admin.kubeconfig get node $node_name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  log "node back up and Ready, $((SECONDS - t0))s after the crash"
}

# ---------------------------------------------------------------------------------------------

[ "$(id -u)" = 0 ] || die "the node needs root (network namespaces, mounts, cgroups)"
cmd=${1:-}; shift || true
case "$cmd" in
  down)
    [ $# -eq 1 ] || usage
    # Under the node lock: the namespace and interface names are the machine's, so tearing down
    # while another run starts its node would take that node's namespace.
    exec 8>"$lock"
    if ! flock -n 8; then
      log "a node run holds $lock; waiting for it to end"
      flock 8
    fi
    down "$1"
    ;;
  run)
    keep=no
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
      case "$1" in --keep) keep=yes ;; *) usage ;; esac
      shift
    done
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || usage
    started=$SECONDS
    if [ -z "${E2E_COMPONENTS_ENV:-}" ]; then E2E_COMPONENTS_ENV=$(bash "$here/build.sh" | tail -n1); fi
    if [ -z "${E2E_IMAGES_DIR:-}" ]; then E2E_IMAGES_DIR=$(bash "$here/images.sh" | tail -n1); fi
    export E2E_COMPONENTS_ENV E2E_IMAGES_DIR

    exec 8>"$lock"
    if ! flock -n 8; then
      log "another node runs on this machine ($lock); waiting for it"
      flock 8
    fi
    clear_leftovers
    dir=$(mktemp -d /var/tmp/rz-e2e.XXXXXX) # short: kubelet's socket paths under it must fit in 107 bytes
    chmod 755 "$dir"
    on_exit() {
      local status=$?
      trap - EXIT INT TERM
      # The process reading our stderr (a test that died) may be gone: a progress line must not
      # end this script by SIGPIPE before the teardown (its lines are lost, the teardown is not).
      trap '' PIPE
      if [ "$keep" = yes ]; then
        : >"$dir/state/kept"
        log "--keep: the node stays up; stop it with: e2e/node.sh down $dir"
      else
        down "$dir" || status=1
      fi
      exit "$status"
    }
    trap on_exit EXIT
    trap 'log "interrupted"; exit 130' INT TERM HUP
    up
    set -a
    # shellcheck disable=SC1091
    source "$dir/node.env"
    set +a
    export E2E_NODE_ENV=$dir/node.env
    # COMMAND runs in the background so that a signal reaches this script at once (bash runs a
    # trap only after the foreground command ends); the trap stops COMMAND, then tears down.
    # Its stdin stays this script's (a background command would get /dev/null).
    exec 3<&0
    "$@" <&3 8>&- &
    command_pid=$!
    trap 'log "interrupted; stopping the command (pid $command_pid)"; kill -TERM "$command_pid" 2>/dev/null; wait "$command_pid"; exit 130' INT TERM HUP
    status=0
    wait "$command_pid" || status=$?
    exit "$status"
    ;;
  restart)
    [ $# -ge 2 ] || usage
    dir=$1 name=$2 down=0 containers=no
    shift 2
    while [ $# -gt 0 ]; do
      case "$1" in
        --down) down=${2:?}; shift ;;
        --with-containers) containers=yes ;;
        *) usage ;;
      esac
      shift
    done
    [[ "$down" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--down takes seconds, not $down"
    running_node "$dir"
    restart_daemon "$name" "$down" "$containers"
    ;;
  reboot)
    [ $# -ge 1 ] || usage
    dir=$1 down=0
    shift
    while [ $# -gt 0 ]; do
      case "$1" in --down) down=${2:?}; shift ;; *) usage ;; esac
      shift
    done
    [[ "$down" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--down takes seconds, not $down"
    running_node "$dir"
    reboot_node "$down"
    ;;
  *) usage ;;
esac
