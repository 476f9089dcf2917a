#!/usr/bin/env bash
# V8's code cache of a built bundle, into DIST/compile-cache/<node version>-<arch>-<V8 flag hash>/,
# which dist/main.js (scripts/dist-main.js) reads: a pod's root filesystem is read-only, so without
# a cache shipped in the image every start compiles the bundle.
#
#   bash scripts/compile-cache.sh DIST                 # with the node on PATH (scripts/build.sh)
#   bash scripts/compile-cache.sh DIST qemu-aarch64-static -L ROOTFS ROOTFS/usr/local/bin/node
#                                                      # another architecture's node (scripts/image.sh)
#
# Node writes the cache when the run ends, with the functions the run compiled: the bundle's module
# set-up and --version's path. The cache holds the bundle's path and V8's hash seed, so the run
# reaches the bundle through /proc/self/cwd (the same path from any checkout or temp directory) and
# passes --random-seed (which fixes the seed for that run only): the cache is the same bytes at
# every build, the image's digests stay reproducible, and a process started from any path without
# the flag accepts it (heap-size flags such as NODE_FLAGS' do not change V8's flag hash).
# docs/performance.md, "Start-up: what runs before the first resize".
set -euo pipefail
dist=${1:?usage: $0 DIST [NODE-COMMAND...]}
shift
if [ $# -eq 0 ]; then set -- node; fi
dist=$(cd "$dist" && pwd)
mkdir -p "$dist/compile-cache"
# dist/main.js writes into the directory because it is writable here.
(cd "$(dirname "$dist")" && "$@" --preserve-symlinks --preserve-symlinks-main --random-seed=1 \
  "/proc/self/cwd/$(basename "$dist")/main.js" --version >/dev/null)
