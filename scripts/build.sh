#!/usr/bin/env bash
# `npm run build`: type-check src/ (without tests), then bundle the resizer and the production
# dependencies it imports into one ES module, $out/resizer.js (dist/ by default, or the directory
# given as $1), with $out/main.js, the entry point, beside it (scripts/dist-main.js: it turns on the
# V8 compile cache where the runtime has it). One file instead of ~900 modules is what makes the
# start-up fast; the bundle reads ../package.json for --version, so keep package.json one level
# above the output directory. esbuild comes with tsx (a dev dependency).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
rm -rf "$out"
npx tsc -p tsconfig.build.json --noEmit
mkdir -p "$out"
# `require` for the bundled CommonJS dependencies (grpc-js, protobufjs, prom-client, js-yaml).
banner="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
npx --no-install esbuild src/main.ts --bundle --platform=node --format=esm --target=node20.19 \
  --outfile="$out/resizer.js" --sourcemap --banner:js="$banner" --log-level=warning
cp scripts/dist-main.js "$out/main.js"
