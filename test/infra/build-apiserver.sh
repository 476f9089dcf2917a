#!/usr/bin/env bash
# Builds kube-apiserver of another Kubernetes version for the version matrix (npm run test:matrix),
# from the Go module proxy, once per version, into the same cache as build-components.sh.
#
#   test/infra/build-apiserver.sh v1.35.4     # prints the binary's path on the last line of stdout
#
# k8s.io/kubernetes requires its staging modules at v0.0.0 and maps them to ./staging with replace
# directives, which a consumer's build ignores; so a throwaway module in the cache gets one replace
# per staging module, pointing at the published v0.<minor>.<patch> tag. The list is read from the
# downloaded go.mod of that exact version, because it changes between releases (1.36 added two).
# A pre-release (v1.38.0-beta.0) maps to the staging tag of the same pre-release (v0.38.0-beta.0).
# A release whose go.mod asks for a newer Go than this machine's gets that toolchain from the
# module proxy (GOTOOLCHAIN=go1.27.3 for 1.38), the one route to a newer Go here.
set -euo pipefail

version=${1:?usage: build-apiserver.sh vMAJOR.MINOR.PATCH[-PRERELEASE]}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)(-[a-z]+\.[0-9]+)?$ ]] || { echo "not a Kubernetes version: $version" >&2; exit 2; }
minor=${BASH_REMATCH[1]}
patch=${BASH_REMATCH[2]}
prerelease=${BASH_REMATCH[3]}
newer_toolchain=go1.27.3
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
bin=$cache/bin/kube-apiserver-$version
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { echo "[build-apiserver] $*" >&2; }
mkdir -p "$cache/bin"
exec 9>"$cache/build-apiserver-$version.lock"
flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

work=$cache/modules/kube-apiserver-$version
mkdir -p "$work"
cd "$work"
# A release that needs a newer Go than GOTOOLCHAIN=local fails the download while still fetching its
# go.mod, which is all this step needs: the check below decides.
gomod=$({ go mod download -json "k8s.io/kubernetes@$version" || true; } | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -f "$gomod" ] || { echo "could not download k8s.io/kubernetes@$version's go.mod" >&2; exit 1; }
go_line=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
local_go=$(go env GOVERSION | sed 's/^go//')
if [ -n "$go_line" ] && [ "$(printf '%s\n%s\n' "$go_line" "$local_go" | sort -V | tail -n1)" != "$local_go" ]; then
  log "k8s.io/kubernetes $version needs Go $go_line; this machine has $local_go: using $newer_toolchain from the module proxy"
  export GOTOOLCHAIN=$newer_toolchain
fi
{
  echo "module csi-resizer.local/kube-apiserver-$version"
  echo
  echo "go ${go_line:-1.26.0}"
  echo
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#replace \1 => \1 v0.'"$minor.$patch$prerelease"'#p' "$gomod"
  echo
  echo "require k8s.io/kubernetes $version"
} > go.mod
cat > tools.go <<GO
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
log "resolving k8s.io/kubernetes $version ($(grep -c '^replace' go.mod) staging modules)"
go mod tidy >&2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
start=$SECONDS
log "building kube-apiserver $version (first time only; many minutes on 2 cores)"
go build -p 2 -trimpath -ldflags "$ldflags" -o "$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
mv "$bin.tmp" "$bin"
log "built kube-apiserver $version in $((SECONDS - start))s -> $bin"
echo "$bin"
