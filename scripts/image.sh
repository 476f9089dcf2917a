#!/usr/bin/env bash
# `npm run image`: the container image, built without a Docker engine and without a base image,
# as an OCI image layout (an index with one manifest per architecture).
#
#   npm run image                                   # amd64 + arm64 into .image/oci (gitignored)
#   bash scripts/image.sh --out DIR --arch amd64    # one architecture, another directory
#
# Each image has two layers:
#   base (per architecture)  the pinned Node.js binary (scripts/node-runtime.pins, the shipped
#                            major) at /usr/local/bin/node, the shared libraries it links and
#                            their own dependencies, taken from Debian's packages (apt-get download
#                            libc6 libstdc++6 libgcc-s1 libatomic1 for that architecture), CA
#                            certificates, /etc/passwd and /etc/group with the user csi-resizer
#                            (uid/gid 1000), the packages' copyright files and their versions
#   app (the same bytes on both)  /app: package.json, dist/ (npm run build: one bundle with the
#                            production dependencies in it; dist/compile-cache, V8's code cache of
#                            the bundle for each architecture's node) and their license files
# No shell, no package manager. The process runs as root unless the pod says otherwise (as upstream's
# image, to open a root driver's socket; our manifests run it as uid 1000) and is PID 1: it handles SIGTERM and
# SIGINT itself (src/app), so no init is needed.
#
# Reproducible: every file's mtime is SOURCE_DATE_EPOCH (default: the last commit's time), owner
# 0:0, modes 0755/0644, entries sorted, gzip without a name or time, JSON written in a fixed
# order; the same commit, lockfile and Debian packages give the same digests. The Debian packages
# are cached in ~/.cache/csi-resizer/image/debs/<arch> (delete them to take newer ones).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

out=.image/oci
arches=amd64,arm64
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --arch) arches=$2; shift 2 ;;
    --arch=*) arches=${1#--arch=}; shift ;;
    *) echo "usage: $0 [--out DIR] [--arch amd64,arm64]" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a arch_list <<<"$arches"

# Built on the shipped runtime whatever NODE_LTS says: the layers' gzip comes from its zlib, so
# the same commit gives the same digests under `NODE_LTS=24 npm test` too.
NODE_LTS=$(node_runtime_default_major) use_node_runtime
bash scripts/setup.sh --no-components --image-tools "--arch=$arches"

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
version=$(node -p 'require("./package.json").version')
major=$(node_runtime_default_major)
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}/image
work=$(mktemp -d "${TMPDIR:-/tmp}/csi-resizer-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS

node_arch() { case "$1" in amd64) echo x64 ;; arm64) echo arm64 ;; *) echo "unknown architecture $1" >&2; return 1 ;; esac; }
triplet() { case "$1" in amd64) echo x86_64-linux-gnu ;; arm64) echo aarch64-linux-gnu ;; esac; }
qemu_user() { case "$1" in amd64) echo qemu-x86_64-static ;; arm64) echo qemu-aarch64-static ;; esac; }

# Directories 0755, executables 0755, other files 0644, whatever umask built them.
normalize_modes() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -perm /111 -exec chmod 0755 {} +
  find "$1" -type f ! -perm /111 -exec chmod 0644 {} +
}

# A layer: the tree as an uncompressed tar with fixed metadata, in name order.
layer_tar() { # dir out.tar
  (cd "$1" && LC_ALL=C find . -mindepth 1 -maxdepth 1 -printf '%P\0' | LC_ALL=C sort -z |
    tar --create --file "$2" --null --files-from - \
      --sort=name --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
      --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --hard-dereference)
}

echo "== app layer"
app=$work/app
mkdir -p "$app/app"
# package.json first: the build's run of the bundle, which makes its compile cache, reads it.
cp package.json "$app/app/"
bash scripts/build.sh "$app/app/dist"
# The bundle holds every production dependency, so node_modules is not shipped; their license and
# notice files are (MIT and Apache-2.0 ask for them to travel with the code), under
# /app/licenses/<package>/, taken from a production install of the lockfile.
deps=$work/deps
mkdir -p "$deps"
cp package.json package-lock.json "$deps/"
(cd "$deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
node scripts/collect-licenses.mjs "$deps" "$app/app/licenses" >/dev/null
# The bundle's source map stays: its paths are relative (../src/...), so the layer is the same from
# any clone, and the logger reads it to print our TypeScript file:line (and --vmodule matches them).
# The layer is written after the base layers: each other architecture's node adds its compile cache
# to dist/compile-cache (the build made this one's).

# The ELF NEEDED closure of the node binary, resolved inside the unpacked packages of one arch.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
copy_libs() { # debroot rootfs triplet elf
  local debroot=$1 rootfs=$2 trip=$3 queue=("$4") seen=" " elf lib src
  while [ "${#queue[@]}" -gt 0 ]; do
    elf=${queue[0]}
    queue=("${queue[@]:1}")
    for lib in $(needed "$elf"); do
      case "$seen" in *" $lib "*) continue ;; esac
      seen+="$lib "
      src=""
      for dir in "lib/$trip" "usr/lib/$trip"; do
        if [ -e "$debroot/$dir/$lib" ]; then src=$(readlink -f "$debroot/$dir/$lib"); break; fi
      done
      if [ -z "$src" ]; then echo "$lib (needed by $(basename "$elf")) is in none of the Debian packages unpacked for $trip" >&2; return 1; fi
      install -D -m "$(stat -c %a "$src")" "$src" "$rootfs/lib/$trip/$lib"
      queue+=("$rootfs/lib/$trip/$lib")
    done
  done
}

debs=(libc6 libstdc++6 libgcc-s1 libatomic1)
for arch in "${arch_list[@]}"; do
  echo "== base layer ($arch)"
  narch=$(node_arch "$arch")
  trip=$(triplet "$arch")
  runtime=$(node_runtime_dir "$major" "$narch")
  debdir=$cache/debs/$arch
  mkdir -p "$debdir"
  fetch_deb() { # package arch
    if ! compgen -G "$debdir/${1}_*_$2.deb" >/dev/null; then
      (cd "$debdir" && apt-get download -qq -o APT::Sandbox::User=root "$1:$2")
    fi
  }
  for pkg in "${debs[@]}"; do fetch_deb "$pkg" "$arch"; done
  fetch_deb ca-certificates all
  # libgcc-s1, libstdc++6 and libatomic1 keep their copyright in gcc-<major>-base.
  gcc_base=$(dpkg-deb -f "$(compgen -G "$debdir/libgcc-s1_*_$arch.deb")" Depends | grep -o 'gcc-[0-9]*-base' | head -1)
  fetch_deb "$gcc_base" "$arch"
  debroot=$work/debroot-$arch
  rootfs=$work/base-$arch
  mkdir -p "$debroot" "$rootfs"
  : >"$work/packages-$arch.txt"
  for deb in "$debdir"/*.deb; do
    dpkg-deb -x "$deb" "$debroot"
    pkg=$(dpkg-deb -f "$deb" Package)
    echo "$pkg $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture)" >>"$work/packages-$arch.txt"
    if [ ! -L "$debroot/usr/share/doc/$pkg" ]; then
      install -D -m 0644 "$debroot/usr/share/doc/$pkg/copyright" "$rootfs/usr/share/doc/$pkg/copyright"
    fi
  done

  install -D -m 0755 "$runtime/bin/node" "$rootfs/usr/local/bin/node"
  install -D -m 0644 "$runtime/LICENSE" "$rootfs/usr/local/share/doc/node/LICENSE"
  copy_libs "$debroot" "$rootfs" "$trip" "$runtime/bin/node"
  interp=$(readelf -l "$runtime/bin/node" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  if [ ! -e "$rootfs$interp" ]; then
    mkdir -p "$(dirname "$rootfs$interp")"
    ln -s "$(realpath --relative-to="$(dirname "$rootfs$interp")" "$rootfs/lib/$trip/$(basename "$interp")")" "$rootfs$interp"
  fi

  # The bundle update-ca-certificates would write from the package's certificates.
  mkdir -p "$rootfs/etc/ssl/certs"
  LC_ALL=C find "$debroot/usr/share/ca-certificates" -name '*.crt' -print0 | LC_ALL=C sort -z | xargs -0 cat >"$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ncsi-resizer:x:1000:1000:csi-resizer:/nonexistent:/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\ncsi-resizer:x:1000:\n' >"$rootfs/etc/group"
  install -D -m 0644 "$work/packages-$arch.txt" "$rootfs/usr/share/doc/csi-resizer-image/debian-packages.txt"
  mkdir -p "$rootfs/tmp"
  normalize_modes "$rootfs"
  chmod 1777 "$rootfs/tmp"
  layer_tar "$rootfs" "$work/base-$arch.tar"

  # The compile cache of this architecture's node, made by running it under qemu-user with its own
  # libraries (scripts/compile-cache.sh; dist/main.js picks the directory of the runtime it runs on).
  if [ "$narch" != "$(node -p process.arch)" ]; then
    qemu=$(qemu_user "$arch")
    command -v "$qemu" >/dev/null || { echo "$qemu (package qemu-user-static) is needed to make the $arch compile cache" >&2; exit 1; }
    bash scripts/compile-cache.sh "$app/app/dist" "$qemu" -L "$rootfs" "$rootfs/usr/local/bin/node"
  fi
done
normalize_modes "$app"
layer_tar "$app" "$work/app.tar"

echo "== OCI layout"
layers=()
for arch in "${arch_list[@]}"; do layers+=("$arch=$work/base-$arch.tar,$work/app.tar"); done
rm -rf "$out"
node --import tsx scripts/oci-layout.ts --out "$out" --name csi-resizer --tag "$version" --created "$epoch" \
  --node-version "$(node_runtime_pin "$major" x64 | cut -d' ' -f1)" "${layers[@]}"
echo "== image built in $((SECONDS - start))s: $out"
