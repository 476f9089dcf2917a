#!/usr/bin/env bash
# Builds our resizer from a commit (HEAD by default) into bench/.build/snap, so a long benchmark
# measures exactly that commit while the working tree keeps changing:
#   bash bench/snapshot.sh [commit] && node --import tsx bench/run.ts --ours-entry bench/.build/snap/dist/main.js
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
snap=bench/.build/snap
rm -rf "$snap" && mkdir -p "$snap"
git archive "$rev" src scripts package.json tsconfig.json tsconfig.build.json | tar -x -C "$snap"
# The commit's own build script (older commits: plain tsc output).
if grep -q esbuild "$snap/scripts/build.sh" 2>/dev/null; then (cd "$snap" && bash scripts/build.sh); else (cd "$snap" && npx tsc -p tsconfig.build.json); fi
git rev-parse --short "$rev" > "$snap/COMMIT"
echo "$snap/dist/main.js ($(cat "$snap/COMMIT"))"
