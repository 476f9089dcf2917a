#!/usr/bin/env bash
# Instructions per API request through the request layer of two source trees (OTHER_ROOT, e.g.
# bench/.build/base after `bash bench/snapshot.sh COMMIT && mv bench/.build/snap bench/.build/base`,
# and the working tree), counted by valgrind's callgrind: each tree's request-count.ts bundle runs
# K1 and then K2 requests in fresh processes against one local control plane, and
# (instructions(K2) - instructions(K1)) / (K2 - K1) is the cost of one request with start-up,
# connection set-up and JIT warm-up taken out. Instruction counts do not move with the machine's
# load the way CPU time does.
#   bash bench/probes/request-instructions.sh OTHER_ROOT [K1] [K2] [C] [repeats]
set -euo pipefail
cd "$(dirname "$0")/../.."
other=${1:?usage: request-instructions.sh OTHER_ROOT [K1] [K2] [C] [repeats]}
k1=${2:-200} k2=${3:-1000} c=${4:-10} repeats=${5:-2}
out=bench/.build/request-count
mkdir -p "$out"
declare -A roots=([other]="$(cd "$other" && pwd)" [working]="$(pwd)")
for name in other working; do
  sed "s#'\.\./\.\./src/\(.*\)\.js'#'${roots[$name]}/src/\1.ts'#" bench/probes/request-count.ts >"$out/$name.ts"
  npx --no-install esbuild "$out/$name.ts" --bundle --platform=node --format=esm --outfile="$out/$name.mjs" --log-level=warning \
    --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
done
cat >"$out/run.sh" <<SCRIPT
set -euo pipefail
count() { valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=/dev/null node "$out/\$1.mjs" "\$CSI_RESIZER_TEST_CLUSTER" "\$2" $c 2>&1 | awk '/Collected/ {print \$4}'; }
for r in \$(seq $repeats); do
  for name in other working; do
    a=\$(count \$name $k1); b=\$(count \$name $k2)
    echo "\$name: \$(( (b - a) / ($k2 - $k1) )) instructions per request (\$a for $k1, \$b for $k2)"
  done
done
SCRIPT
node --import tsx test/cluster/run-with-cluster.ts -- bash "$out/run.sh" 2> >(grep -v '^\[cluster\]' >&2)
echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
