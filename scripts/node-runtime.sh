#!/usr/bin/env bash
# The pinned Node.js runtime (scripts/node-runtime.pins), installed from the npm registry into the
# cache outside the repository, one directory per version and architecture:
#   ${CSI_RESIZER_CACHE:-~/.cache/csi-resizer}/node/<version>-linux-<arch>/bin/node
#
# Sourced (scripts/test.sh, setup.sh, demo.sh, bench.sh, image.sh):
#   use_node_runtime                  install if needed, put its bin/ first on PATH, so tsc, tsx,
#                                     node --test and every node the tests spawn run on it
#   node_runtime_dir <major> <arch>   install if needed, print the directory
# Run:
#   bash scripts/node-runtime.sh dir [major] [arch]   the same, from the command line
#   bash scripts/node-runtime.sh version [major]      the pinned version of a major
#
# The major is $NODE_LTS when set, else the first one in the pins file (the image's). The tarball
# comes from `npm pack node-linux-<arch>@<version>`, and its sha512 must equal the pinned one.

node_runtime_pins="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/node-runtime.pins"

node_runtime_cache() {
  echo "${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}/node"
}

node_runtime_default_major() {
  awk '!/^#/ && NF { print $1; exit }' "$node_runtime_pins"
}

node_runtime_host_arch() {
  case "$(uname -m)" in
    x86_64 | amd64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) echo "unsupported machine $(uname -m): the pinned runtimes are x64 and arm64" >&2; return 1 ;;
  esac
}

# Prints "version integrity" for a major and an arch, or fails naming the majors on offer.
node_runtime_pin() {
  local major=$1 arch=$2 line
  line=$(awk -v m="$major" -v a="$arch" '!/^#/ && $1 == m && $3 == a { print $2, $4 }' "$node_runtime_pins")
  if [ -z "$line" ]; then
    echo "no pinned Node.js $major for $arch in $node_runtime_pins (pinned majors: $(awk '!/^#/ && NF { print $1 }' "$node_runtime_pins" | sort -u | tr '\n' ' '))" >&2
    return 1
  fi
  echo "$line"
}

node_runtime_dir() {
  local major=$1 arch=$2 pin version integrity cache dir
  pin=$(node_runtime_pin "$major" "$arch") || return 1
  read -r version integrity <<<"$pin"
  cache=$(node_runtime_cache)
  dir=$cache/$version-linux-$arch
  if [ -f "$dir/.integrity" ] && [ "$(cat "$dir/.integrity")" = "$integrity" ] && [ -x "$dir/bin/node" ]; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$cache"
  (
    # One installer at a time per cache; a second one waits, then finds the runtime in place.
    exec 8>"$cache/.lock"
    flock 8
    if [ -f "$dir/.integrity" ] && [ "$(cat "$dir/.integrity")" = "$integrity" ]; then exit 0; fi
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    echo "== installing Node.js $version ($arch) from the npm registry (node-linux-$arch@$version) into $dir" >&2
    (cd "$tmp" && npm pack "node-linux-$arch@$version" --silent --no-fund >/dev/null)
    tarball=$tmp/node-linux-$arch-$version.tgz
    got=$(node -e 'const h=require("crypto").createHash("sha512");h.update(require("fs").readFileSync(process.argv[1]));console.log("sha512-"+h.digest("base64"))' "$tarball")
    if [ "$got" != "$integrity" ]; then
      echo "node-linux-$arch@$version: tarball sha512 is $got, the pin in $node_runtime_pins is $integrity; refusing it" >&2
      exit 1
    fi
    mkdir "$tmp/runtime"
    tar -xzf "$tarball" -C "$tmp/runtime" --strip-components=1 package/bin/node package/LICENSE package/package.json
    echo "$integrity" >"$tmp/runtime/.integrity"
    rm -rf "$dir"
    mv -T "$tmp/runtime" "$dir"
  ) || return 1
  echo "$dir"
}

use_node_runtime() {
  local major arch dir
  major=${NODE_LTS:-$(node_runtime_default_major)}
  arch=$(node_runtime_host_arch) || return 1
  dir=$(node_runtime_dir "$major" "$arch") || return 1
  case ":$PATH:" in
    "$dir/bin:"*) ;;
    *) export PATH="$dir/bin:$PATH" ;;
  esac
  export CSI_RESIZER_NODE_DIR=$dir
  hash -r
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    dir) node_runtime_dir "${2:-${NODE_LTS:-$(node_runtime_default_major)}}" "${3:-$(node_runtime_host_arch)}" ;;
    version) node_runtime_pin "${2:-${NODE_LTS:-$(node_runtime_default_major)}}" x64 | cut -d' ' -f1 ;;
    *) echo "usage: $0 dir [major] [arch] | version [major]" >&2; exit 2 ;;
  esac
fi
