#!/usr/bin/env bash
# `npm run build`: type-check src/ (without tests), then bundle the resizer and the production
# dependencies it imports into one ES module, $out/resizer.js (dist/ by default, or the directory
# given as $1), with $out/main.js, the entry point, beside it (scripts/dist-main.js: it turns on the
# V8 compile cache where the runtime has it) and $out/compile-cache, that cache made now for this
# runtime (scripts/compile-cache.sh). One file instead of ~900 modules is what makes the
# start-up fast; the bundle reads ../package.json for --version, so keep package.json one level
# above the output directory. esbuild comes with tsx (a dev dependency). The bundled dependencies'
# license comments go to $out/resizer.js.LEGAL.txt (shipped beside the bundle), not into it.
# The commit goes into $out/build-info.json for --version: $SOURCE_COMMIT when set (the image
# build, which has no .git), else this checkout's HEAD (with "dirty" when tracked files differ).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
rm -rf "$out"
npx tsc -p tsconfig.build.json --noEmit
mkdir -p "$out"
# `require` for the bundled CommonJS dependencies (prom-client, js-yaml).
banner="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
npx --no-install esbuild src/main.ts --bundle --platform=node --format=esm --target=node24 \
  --outfile="$out/resizer.js" --sourcemap --sources-content=false --banner:js="$banner" --log-level=warning \
  --legal-comments=external
# Builtins through require, not ESM imports (an ESM import of node:http loads undici; see the script).
node scripts/bundle-builtins.mjs "$out/resizer.js" >/dev/null
# Pure ASCII, so V8 keeps the source as a one-byte string (see the script).
node scripts/bundle-ascii.mjs "$out/resizer.js" >/dev/null
# The logger's file:line tables, decoded from the map now instead of at every start.
node --import tsx scripts/gen-log-lines.ts "$out/resizer.js.map"
cp scripts/dist-main.js "$out/main.js"

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

# V8's code cache of the bundle beside it, for this runtime (see the script).
bash scripts/compile-cache.sh "$out"
