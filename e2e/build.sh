#!/usr/bin/env bash
# Builds everything the one-node e2e cluster runs, from the Go module proxy, once per version,
# into the project's cache (the same cache and naming as test/infra/build-components.sh, whose
# etcd, kube-apiserver and upstream csi-resizer it reuses):
#
#   from e2e/components (k8s.io/kubernetes with a replace per staging module, like test/infra/components):
#     kubelet kube-controller-manager kube-scheduler kube-proxy kubectl   (cmd/*)
#     e2e.test (go test -c k8s.io/kubernetes/test/e2e)  ginkgo (the CLI at the version k8s requires)
#     the stand-ins: hostpathplugin, node-driver-registrar, livenessprobe (our own code, see
#     e2e/components/*/main.go)
#     loopfs-testdriver (ours: a CSI test driver with real volumes; its Go tests run first, as
#     root, and the binary is built only when they pass)
#     report-trim (ours: keeps the specs that ran in a ginkgo report, writes it as JSON and JUnit)
#   containerd, containerd-shim-runc-v2, ctr (github.com/containerd/containerd/v2, no replaces)
#   crictl (sigs.k8s.io/cri-tools)
#   csi-provisioner, csi-attacher (their go.mod carries replace lines, so `go install mod@v` is
#     refused: each is built inside a writable copy of its module)
#   pause (gcc -static from build/pause/linux/pause.c in the kubernetes module)
#
# Debian packages it needs (installed if missing): runc, containernetworking-plugins,
# busybox-static, gcc, iptables, conntrack, and for the loopfs test driver e2fsprogs, xfsprogs
# and util-linux's losetup.
#
# Writes $bin/e2e-components.env (NAME=path lines) and prints its path on the last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
bin=$cache/bin
mkdir -p "$bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

[ $# -eq 0 ] || { echo "usage: $0 (no arguments)" >&2; exit 2; }

log() { echo "[e2e/build] $*" >&2; }

k8s_version=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/components/go.mod")
ginkgo_version=$(sed -n 's/^[[:space:]]*github.com\/onsi\/ginkgo\/v2 \(v[0-9.]*\)$/\1/p' "$here/components/go.mod")
containerd_version=v2.4.2
crictl_version=v1.37.0
provisioner_version=v6.4.0
attacher_version=v4.13.0
mod_hash=$(cat "$here/components/go.mod" "$here/components/go.sum" | sha256sum | cut -c1-12)
standin_hash() { cat "$here/components/go.mod" "$here/components/go.sum" "$here/components/$1"/*.go | sha256sum | cut -c1-12; }

kubelet=$bin/kubelet-$k8s_version-$mod_hash
kcm=$bin/kube-controller-manager-$k8s_version-$mod_hash
scheduler=$bin/kube-scheduler-$k8s_version-$mod_hash
kube_proxy=$bin/kube-proxy-$k8s_version-$mod_hash
kubectl=$bin/kubectl-$k8s_version-$mod_hash
e2e_test=$bin/e2e.test-$k8s_version-$mod_hash
ginkgo=$bin/ginkgo-$ginkgo_version
hostpath_standin=$bin/standin-hostpathplugin-$(standin_hash hostpathplugin)
registrar_standin=$bin/standin-node-driver-registrar-$(standin_hash node-driver-registrar)
livenessprobe_standin=$bin/standin-livenessprobe-$(standin_hash livenessprobe)
report_trim=$bin/e2e-report-trim-$(standin_hash report-trim)
loopfs_driver=$bin/loopfs-testdriver-$(standin_hash loopfs-testdriver)
containerd_dir=$bin/containerd-$containerd_version # containerd looks its shim up on PATH
crictl=$bin/crictl-$crictl_version
provisioner=$bin/csi-provisioner-$provisioner_version
attacher=$bin/csi-attacher-$attacher_version
pause=$bin/pause-$k8s_version

# One run at a time per cache; its own lock, so it can run beside build-components.sh.
exec 9>"$cache/e2e-build.lock"
if ! flock -n 9; then
  log "another run holds $cache/e2e-build.lock; waiting for it"
  flock 9
fi

# Debian packages: the runtime (runc), the CNI plugins, busybox for the busybox image, a C
# compiler for pause, iptables for kube-proxy and the CNI bridge, conntrack for kube-proxy.
missing=()
[ -x /usr/sbin/runc ] || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v iptables >/dev/null || missing+=(iptables)
command -v conntrack >/dev/null || missing+=(conntrack)
command -v mke2fs >/dev/null && command -v resize2fs >/dev/null && command -v e2fsck >/dev/null || missing+=(e2fsprogs)
command -v mkfs.xfs >/dev/null && command -v xfs_growfs >/dev/null || missing+=(xfsprogs)
command -v losetup >/dev/null || missing+=(mount)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq >&2
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

ldflags_k8s() {
  local minor flags="-s -w"
  minor=$(echo "$k8s_version" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags="$flags -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  echo "$flags"
}

timed() { # name out -- command...   (the command writes "$out.tmp")
  local name=$1 out=$2 start=$SECONDS; shift 3
  log "building $name (first time only)"
  "$@" >&2
  mv "$out.tmp" "$out"
  log "built $name in $((SECONDS - start))s -> $out"
}

k8s_build() { # out package
  (cd "$here/components" && go build -p 2 -trimpath -ldflags "$(ldflags_k8s)" -o "$1.tmp" "$2")
}
[ -x "$kubelet" ] || timed "kubelet $k8s_version" "$kubelet" -- k8s_build "$kubelet" k8s.io/kubernetes/cmd/kubelet
[ -x "$kcm" ] || timed "kube-controller-manager $k8s_version" "$kcm" -- k8s_build "$kcm" k8s.io/kubernetes/cmd/kube-controller-manager
[ -x "$scheduler" ] || timed "kube-scheduler $k8s_version" "$scheduler" -- k8s_build "$scheduler" k8s.io/kubernetes/cmd/kube-scheduler
[ -x "$kube_proxy" ] || timed "kube-proxy $k8s_version" "$kube_proxy" -- k8s_build "$kube_proxy" k8s.io/kubernetes/cmd/kube-proxy
[ -x "$kubectl" ] || timed "kubectl $k8s_version" "$kubectl" -- k8s_build "$kubectl" k8s.io/kubernetes/cmd/kubectl
[ -x "$ginkgo" ] || timed "ginkgo $ginkgo_version" "$ginkgo" -- \
  bash -c "cd '$here/components' && go build -p 2 -trimpath -ldflags '-s -w' -o '$ginkgo.tmp' github.com/onsi/ginkgo/v2/ginkgo"
e2e_build() { (cd "$here/components" && go test -c -p 2 -trimpath -ldflags "$(ldflags_k8s)" -o "$e2e_test.tmp" k8s.io/kubernetes/test/e2e); }
[ -x "$e2e_test" ] || timed "e2e.test $k8s_version" "$e2e_test" -- e2e_build

containerd_build() {
  rm -rf "$containerd_dir.tmp" && mkdir -p "$containerd_dir.tmp"
  local p
  for p in containerd containerd-shim-runc-v2 ctr; do
    (cd /tmp && GOBIN="$containerd_dir.tmp" go install -p 2 -trimpath -tags "no_btrfs no_devmapper no_zfs" \
      -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version" \
      "github.com/containerd/containerd/v2/cmd/$p@$containerd_version")
  done
}
[ -x "$containerd_dir/containerd" ] || timed "containerd $containerd_version" "$containerd_dir" -- containerd_build

crictl_build() {
  rm -rf "$cache/gobin-crictl"
  (cd /tmp && GOBIN=$cache/gobin-crictl go install -p 2 -trimpath -ldflags '-s -w' "sigs.k8s.io/cri-tools/cmd/crictl@$crictl_version")
  mv "$cache/gobin-crictl/crictl" "$crictl.tmp" && rm -rf "$cache/gobin-crictl"
}
[ -x "$crictl" ] || timed "crictl $crictl_version" "$crictl" -- crictl_build

# A sidecar whose go.mod has replace lines: built inside a writable copy of its module.
sidecar_build() { # module version cmd out
  local dir src
  dir=$(cd /tmp && go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { log "go mod download $1@$2 gave no directory"; return 1; }
  src=$cache/src/$(basename "$3")-$2
  rm -rf "$src" && mkdir -p "$(dirname "$src")" && cp -r "$dir" "$src" && chmod -R u+w "$src"
  (cd "$src" && go build -p 2 -trimpath -ldflags "-s -w -X main.version=$2" -o "$4.tmp" "./cmd/$3")
  rm -rf "$src"
}
[ -x "$provisioner" ] || timed "csi-provisioner $provisioner_version" "$provisioner" -- \
  sidecar_build github.com/kubernetes-csi/external-provisioner/v6 "$provisioner_version" csi-provisioner "$provisioner"
[ -x "$attacher" ] || timed "csi-attacher $attacher_version" "$attacher" -- \
  sidecar_build github.com/kubernetes-csi/external-attacher/v4 "$attacher_version" csi-attacher "$attacher"

pause_build() {
  local k8s_dir
  k8s_dir=$(cd "$here/components" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
  gcc -Os -static -o "$pause.tmp" "$k8s_dir/build/pause/linux/pause.c" -DVERSION="$k8s_version-csi-resizer-e2e"
  strip "$pause.tmp"
}
[ -x "$pause" ] || timed "pause ($k8s_version build/pause)" "$pause" -- pause_build

[ -x "$hostpath_standin" ] || timed "hostpathplugin stand-in" "$hostpath_standin" -- k8s_build "$hostpath_standin" ./hostpathplugin
[ -x "$registrar_standin" ] || timed "node-driver-registrar stand-in" "$registrar_standin" -- k8s_build "$registrar_standin" ./node-driver-registrar
[ -x "$livenessprobe_standin" ] || timed "livenessprobe stand-in" "$livenessprobe_standin" -- k8s_build "$livenessprobe_standin" ./livenessprobe
[ -x "$report_trim" ] || timed "report-trim" "$report_trim" -- k8s_build "$report_trim" ./report-trim
# -mod=readonly: importing indirect requirements directly must not rewrite go.mod, whose hash
# keys every Kubernetes binary above.
loopfs_build() {
  (cd "$here/components" && GOFLAGS=-mod=readonly go test -count=1 ./loopfs-testdriver &&
    GOFLAGS=-mod=readonly go build -p 2 -trimpath -ldflags '-s -w' -o "$loopfs_driver.tmp" ./loopfs-testdriver)
}
[ -x "$loopfs_driver" ] || timed "loopfs-testdriver (after its tests)" "$loopfs_driver" -- loopfs_build

# etcd, kube-apiserver and upstream's csi-resizer: the builds `npm test` and the bench use.
components_bin=$(bash "$root/test/infra/build-components.sh" --with-upstream | tail -n1)
# shellcheck disable=SC1091
source "$components_bin/components.env"

cat > "$bin/e2e-components.env.tmp" <<EOF
K8S_VERSION=$k8s_version
KUBELET_BIN=$kubelet
KUBE_CONTROLLER_MANAGER_BIN=$kcm
KUBE_SCHEDULER_BIN=$scheduler
KUBE_PROXY_BIN=$kube_proxy
KUBECTL_BIN=$kubectl
E2E_TEST_BIN=$e2e_test
GINKGO_BIN=$ginkgo
HOSTPATH_STANDIN_BIN=$hostpath_standin
REGISTRAR_STANDIN_BIN=$registrar_standin
LIVENESSPROBE_STANDIN_BIN=$livenessprobe_standin
REPORT_TRIM_BIN=$report_trim
LOOPFS_DRIVER_BIN=$loopfs_driver
CONTAINERD_DIR=$containerd_dir
CONTAINERD_VERSION=$containerd_version
CRICTL_BIN=$crictl
CSI_PROVISIONER_BIN=$provisioner
CSI_PROVISIONER_VERSION=$provisioner_version
CSI_ATTACHER_BIN=$attacher
CSI_ATTACHER_VERSION=$attacher_version
PAUSE_BIN=$pause
RUNC_BIN=/usr/sbin/runc
CNI_BIN_DIR=/usr/lib/cni
ETCD_BIN=$ETCD_BIN
KUBE_APISERVER_BIN=$KUBE_APISERVER_BIN
UPSTREAM_RESIZER_BIN=$UPSTREAM_RESIZER_BIN
UPSTREAM_RESIZER_VERSION=$UPSTREAM_RESIZER_VERSION
EOF
mv "$bin/e2e-components.env.tmp" "$bin/e2e-components.env"
echo "$bin/e2e-components.env"
