#!/usr/bin/env bash
# `npm run build`: compile src/ (without tests) into dist/ — or into the directory given as $1 —
# and ship the files the compiled code reads at run time: the CSI proto beside its loader
# (src/csi/proto/load.ts looks for csi.proto next to itself). dist/main.js reads ../package.json
# for --version, so keep package.json one level above the output directory.
# The commit goes into $out/build-info.json for --version: $SOURCE_COMMIT when set (the image
# build, which has no .git), else this checkout's HEAD (with "dirty" when tracked files differ).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
rm -rf "$out"
npx tsc -p tsconfig.build.json --outDir "$out"
mkdir -p "$out/csi/proto"
cp src/csi/proto/csi.proto "$out/csi/proto/csi.proto"

commit=${SOURCE_COMMIT:-}
dirty=false
if [ -z "$commit" ] && [ -e .git ] && desc=$(git describe --always --dirty --abbrev=40 --exclude='*' 2>/dev/null); then
  commit=${desc%-dirty}
  if [ "$commit" != "$desc" ]; then dirty=true; fi
fi
if [ -n "$commit" ]; then
  [[ $commit =~ ^[0-9a-f]{7,64}$ ]] || { echo "SOURCE_COMMIT must be a hex commit id, got '$commit'" >&2; exit 1; }
  printf '{"commit":"%s","dirty":%s}\n' "$commit" "$dirty" > "$out/build-info.json"
else
  echo '{}' > "$out/build-info.json"
fi
