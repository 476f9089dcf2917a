#!/usr/bin/env bash
# Builds the Go oracle for the differential tests (test/oracle/main.go) from the Go module proxy
# into the cache outside the repository, keyed by a hash of its go.mod, go.sum and main.go, so an
# edit rebuilds and nothing else does. Prints the binary's path on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
bin=$cache/bin
mkdir -p "$bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
oracle=$bin/go-oracle-$hash

# One build at a time per cache (a parallel test run waits here, then finds the binary).
exec 9>"$cache/oracle-build.lock"
flock 9

if [ ! -x "$oracle" ]; then
  start=$SECONDS
  echo "[build-oracle] building the Go oracle (first time only)" >&2
  (cd "$here" && go build -p 2 -trimpath -ldflags '-s -w' -o "$oracle.tmp" .) >&2
  mv "$oracle.tmp" "$oracle"
  echo "[build-oracle] built in $((SECONDS - start))s -> $oracle" >&2
fi
echo "$oracle"
