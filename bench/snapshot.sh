#!/usr/bin/env bash
# Builds our resizer from a commit (HEAD by default) into bench/.build/snap, so a long benchmark
# measures exactly that commit while the working tree keeps changing:
#   bash bench/snapshot.sh [commit] && node --import tsx bench/run.ts --ours-entry bench/.build/snap/dist/main.js
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
snap=bench/.build/snap
rm -rf "$snap" && mkdir -p "$snap"
git archive "$rev" src package.json tsconfig.json tsconfig.build.json | tar -x -C "$snap"
(cd "$snap" && npx tsc -p tsconfig.build.json)
git rev-parse --short "$rev" > "$snap/COMMIT"
echo "$snap/dist/main.js ($(cat "$snap/COMMIT"))"
