#!/usr/bin/env bash
# `npm run build`: compile src/ (without tests) into dist/ — or into the directory given as $1 —
# and ship the files the compiled code reads at run time: the CSI proto beside its loader
# (src/csi/proto/load.ts looks for csi.proto next to itself). dist/main.js reads ../package.json
# for --version, so keep package.json one level above the output directory.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
rm -rf "$out"
npx tsc -p tsconfig.build.json --outDir "$out"
mkdir -p "$out/csi/proto"
cp src/csi/proto/csi.proto "$out/csi/proto/csi.proto"
