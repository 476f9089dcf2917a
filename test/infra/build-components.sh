#!/usr/bin/env bash
# Builds the real components the tests and the demo run (etcd, kube-apiserver, the CSI mock
# driver, the grpc-go fault driver) from the Go module proxy, once per version, into a cache
# outside the repository.
# Prints the cache's bin directory on the last line of stdout.
#
#   test/infra/build-components.sh [--with-upstream[=VERSION]]
#
# --with-upstream also builds upstream's Go csi-resizer, the pinned version (upstream_version) or
# VERSION (a release tag such as v2.2.0; `npm run upstream-drift` builds the one it compares), into
# csi-resizer-upstream-<version>. components.env always names the pinned version's binary.
#
# The cache key of each binary is its version plus a hash of the Go files that pin it, so
# editing a go.mod rebuilds and nothing else does.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
bin=$cache/bin
mkdir -p "$bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

k8s_version=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/components/go.mod")
etcd_version=$(sed -n 's/^[[:space:]]*go.etcd.io\/etcd\/server\/v3 \(v[0-9.]*\).*/\1/p' "$here/etcd/go.mod")
upstream_version=v2.3.0
# The CSI spec upstream's sidecar is built with: the official csi.proto our subset is checked
# against (src/csi/proto/conformance.test.ts). The mock driver keeps the spec its Kubernetes
# release requires.
csi_spec_version=v1.13.0
components_hash=$(cat "$here/components/go.mod" "$here/components/go.sum" "$here/components/mockdriver/main.go" | sha256sum | cut -c1-12)
# The fault driver is keyed by its own source: editing it rebuilds it alone, not kube-apiserver.
gofaultdriver_hash=$(cat "$here/components/go.mod" "$here/components/go.sum" "$here"/components/gofaultdriver/*.go | sha256sum | cut -c1-12)
etcd_hash=$(cat "$here/etcd/go.mod" "$here/etcd/go.sum" | sha256sum | cut -c1-12)

apiserver=$bin/kube-apiserver-$k8s_version-$components_hash
mockdriver=$bin/mockdriver-$k8s_version-$components_hash
gofaultdriver=$bin/gofaultdriver-$gofaultdriver_hash
etcd=$bin/etcd-$etcd_version-$etcd_hash
upstream=$bin/csi-resizer-upstream-$upstream_version
upstream_wanted=
case "${1:-}" in
  --with-upstream) upstream_wanted=$upstream_version ;;
  --with-upstream=*)
    upstream_wanted=${1#--with-upstream=}
    # A module version only: it becomes part of a file name and of a go install argument.
    if ! [[ $upstream_wanted =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
      echo "build-components.sh: --with-upstream=$upstream_wanted is not a release version (vMAJOR.MINOR.PATCH)" >&2
      exit 2
    fi
    ;;
esac

log() { echo "[build-components] $*" >&2; }

# One build at a time per cache: a second run (another test run, setup, the demo) waits here for
# the first, then finds the binaries cached and only rewrites components.env. The lock is held on
# fd 9 until this script exits; the kernel releases it even if the script is killed.
lock=$cache/build.lock
exec 9>"$lock"
if ! flock -n 9; then
  log "another build holds $lock; waiting for it to finish"
  flock 9
fi

timed_build() { # name output -- go build args...
  local name=$1 out=$2; shift 3
  local start=$SECONDS
  log "building $name (first time only; a cold build takes many minutes on 2 cores)"
  go build -p 2 -trimpath -o "$out.tmp" "$@" >&2
  mv "$out.tmp" "$out"
  log "built $name in $((SECONDS - start))s -> $out"
}

if [ ! -x "$etcd" ]; then
  (cd "$here/etcd" && timed_build "etcd $etcd_version" "$etcd" -- -ldflags '-s -w' go.etcd.io/etcd/server/v3)
fi

if [ ! -x "$mockdriver" ]; then
  (cd "$here/components" && timed_build "CSI mock driver (k8s $k8s_version)" "$mockdriver" -- -ldflags '-s -w' ./mockdriver)
fi

if [ ! -x "$gofaultdriver" ]; then
  (cd "$here/components" && timed_build "grpc-go fault driver" "$gofaultdriver" -- -ldflags '-s -w' ./gofaultdriver)
fi

if [ ! -x "$apiserver" ]; then
  minor=$(echo "$k8s_version" | cut -d. -f2)
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$here/components" && timed_build "kube-apiserver $k8s_version" "$apiserver" -- -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-apiserver)
fi

if [ -n "$upstream_wanted" ] && [ ! -x "$bin/csi-resizer-upstream-$upstream_wanted" ]; then
  start=$SECONDS
  log "building upstream csi-resizer $upstream_wanted"
  GOBIN=$cache/gobin go install -p 2 -trimpath -ldflags "-s -w -X main.version=$upstream_wanted" \
    "github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer@$upstream_wanted" >&2
  mv "$cache/gobin/csi-resizer" "$bin/csi-resizer-upstream-$upstream_wanted"
  log "built upstream csi-resizer $upstream_wanted in $((SECONDS - start))s"
fi

# The manifest the TypeScript harness reads: which binary is which.
cat > "$bin/components.env.tmp" <<EOF
ETCD_BIN=$etcd
ETCD_VERSION=$etcd_version
KUBE_APISERVER_BIN=$apiserver
K8S_VERSION=$k8s_version
MOCKDRIVER_BIN=$mockdriver
GO_FAULT_DRIVER_BIN=$gofaultdriver
UPSTREAM_RESIZER_BIN=$( [ -x "$upstream" ] && echo "$upstream" )
UPSTREAM_RESIZER_VERSION=$upstream_version
CSI_SPEC_DIR=$(cd /tmp && go mod download -json "github.com/container-storage-interface/spec@$csi_spec_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
EOF
mv "$bin/components.env.tmp" "$bin/components.env"
echo "$bin"
