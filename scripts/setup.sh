#!/usr/bin/env bash
# Everything a fresh machine needs before the tests or the demo: system tools, the pinned Node.js
# runtime (scripts/node-runtime.sh; every later step runs on it), npm dependencies from the
# lockfile, the Go-built components (etcd, kube-apiserver, the CSI mock driver) and the
# operator-kit test tools (kustomize, promtool), cached outside the repository by version.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

# Options of our own; the rest goes to build-components.sh (e.g. --with-upstream).
#   --no-components   skip the Go components (npm run image needs none)
#   --image-tools     also what the image build and its test use: readelf (binutils), podman,
#                     runc, skopeo, umoci, and with --arch=...arm64... Debian's arm64 package lists and
#                     qemu-user-static
components=yes image_tools=no arm64=no
forward=()
for arg in "$@"; do
  case "$arg" in
    --no-components) components=no ;;
    --image-tools) image_tools=yes ;;
    --arch=*) case "$arg" in *arm64*) arm64=yes ;; esac ;;
    *) forward+=("$arg") ;;
  esac
done

missing=()
command -v openssl >/dev/null || missing+=(openssl)
# The CSI interop tests run a CSI server on gRPC C-core: Debian's grpcio and protobuf for Python.
/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null || missing+=(python3-grpcio python3-protobuf)
if [ "$components" = yes ]; then
  command -v go >/dev/null || { echo "Go 1.26+ is required to build the test components" >&2; exit 1; }
fi
if [ "$image_tools" = yes ]; then
  command -v readelf >/dev/null || missing+=(binutils)
  command -v runc >/dev/null || missing+=(runc)
  command -v podman >/dev/null || missing+=(podman)
  command -v skopeo >/dev/null || missing+=(skopeo)
  command -v umoci >/dev/null || missing+=(umoci)
  if [ "$arm64" = yes ]; then
    command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      echo "== dpkg --add-architecture arm64 (for the arm64 image's shared libraries)"
      dpkg --add-architecture arm64
      refresh_lists=yes
    fi
  fi
fi
if [ "${#missing[@]}" -gt 0 ] || [ "${refresh_lists:-no}" = yes ]; then
  echo "== apt-get update${missing[*]:+; installing ${missing[*]}}"
  # Other jobs on the machine may hold the dpkg lock: wait for it rather than fail.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  if [ "${#missing[@]}" -gt 0 ]; then apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; fi
fi

use_node_runtime

stamp=node_modules/.package-lock.sha
want=$(sha256sum package-lock.json | cut -c1-64)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

if [ "$components" = yes ]; then
  echo "== components (built once per version; a cold build takes tens of minutes)"
  bash test/infra/build-components.sh ${forward[@]+"${forward[@]}"} >/dev/null

  echo "== kit tools: kustomize (Go module proxy, ~1.5 min cold) and promtool (Debian package prometheus, 19 MB download)"
  bash test/infra/build-kit-tools.sh >/dev/null
fi
