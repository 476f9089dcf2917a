#!/usr/bin/env bash
# The tools the operator-kit tests run (test/kit/), cached by version outside the repository:
#   kustomize  built from the Go module proxy (sigs.k8s.io/kustomize/kustomize/v5)
#   promtool   taken from Debian's `prometheus` package: the .deb is downloaded with apt-get and
#              only usr/bin/promtool and usr/bin/prometheus are extracted, so nothing is installed
#              and no service starts (the auto-grow tests start their own server on loopback)
# Writes kit-tools.env (KUSTOMIZE_BIN=..., PROMTOOL_BIN=..., PROMETHEUS_BIN=...) in the cache's bin directory and
# prints that directory on the last line of stdout. Fails loudly when a tool cannot be had.
set -euo pipefail

cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
bin=$cache/bin
mkdir -p "$bin"
export GOTOOLCHAIN=local CGO_ENABLED=0

kustomize_version=v5.8.2 # v5.8.3 needs Go 1.27
kustomize=$bin/kustomize-$kustomize_version

log() { echo "[build-kit-tools] $*" >&2; }

# One run at a time per cache (its own lock: the component build may hold build.lock for minutes).
exec 9>"$cache/kit-tools.lock"
if ! flock -n 9; then
  log "another run holds $cache/kit-tools.lock; waiting for it"
  flock 9
fi

if [ ! -x "$kustomize" ]; then
  start=$SECONDS
  log "building kustomize $kustomize_version (first time only, a few minutes on 2 cores)"
  rm -rf "$cache/gobin-kustomize"
  GOBIN=$cache/gobin-kustomize go install -p 2 -trimpath -ldflags '-s -w' "sigs.k8s.io/kustomize/kustomize/v5@$kustomize_version" >&2
  mv "$cache/gobin-kustomize/kustomize" "$kustomize"
  rm -rf "$cache/gobin-kustomize"
  log "built kustomize in $((SECONDS - start))s -> $kustomize"
fi

# promtool and prometheus: the cached copies are named after the Debian version they came from.
promtool=$(ls "$bin"/promtool-* 2>/dev/null | sort -V | tail -n1 || true)
prometheus=${promtool:+$bin/prometheus-${promtool##*/promtool-}}
if [ -z "$promtool" ] || [ ! -x "$promtool" ] || [ ! -x "$prometheus" ]; then
  command -v apt-get >/dev/null || { log "apt-get is not available: cannot get promtool (Debian package prometheus)"; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  log "downloading Debian package prometheus for promtool"
  # A fresh machine's package lists may be empty or old: refresh them once if the download fails.
  if ! (cd "$work" && apt-get download -qq prometheus >&2); then
    apt-get update -qq >&2
    (cd "$work" && apt-get download -qq prometheus >&2)
  fi
  deb=$(ls "$work"/prometheus_*.deb)
  deb_version=$(dpkg-deb -f "$deb" Version | tr '+~:' '___')
  dpkg-deb -x "$deb" "$work/root"
  promtool=$bin/promtool-$deb_version
  install -m 0755 "$work/root/usr/bin/promtool" "$promtool.tmp"
  mv "$promtool.tmp" "$promtool"
  log "promtool $("$promtool" --version 2>&1 | head -n1) -> $promtool"
  prometheus=$bin/prometheus-$deb_version
  install -m 0755 "$work/root/usr/bin/prometheus" "$prometheus.tmp"
  mv "$prometheus.tmp" "$prometheus"
  log "prometheus $("$prometheus" --version 2>&1 | head -n1) -> $prometheus"
fi

cat > "$bin/kit-tools.env.tmp" <<EOF
KUSTOMIZE_BIN=$kustomize
KUSTOMIZE_VERSION=$kustomize_version
PROMTOOL_BIN=$promtool
PROMETHEUS_BIN=$prometheus
EOF
mv "$bin/kit-tools.env.tmp" "$bin/kit-tools.env"
echo "$bin"
