#!/usr/bin/env bash
# The container images the one-node e2e cluster runs, built offline into the project's cache as
# docker-archive tarballs that `ctr images import` reads, each under the name Kubernetes' CSI mock
# manifests (test/e2e/testing-manifests/storage-csi/mock, and hostpath/hostpath for the
# csi-hostpath driver) or its e2e image list
# (test/utils/image/manifest.go) use, read from the kubernetes module so they follow its version:
#
#   csi-provisioner, csi-attacher      external-provisioner / external-attacher, built by e2e/build.sh
#   csi-node-driver-registrar          STAND-IN: e2e/components/node-driver-registrar
#   hostpathplugin                     STAND-IN: e2e/components/hostpathplugin
#   livenessprobe                      STAND-IN: e2e/components/livenessprobe (csi-hostpath driver only)
#   loopfs-testdriver                  OUR TEST DRIVER: e2e/components/loopfs-testdriver, with
#                                      Debian's losetup, e2fsprogs and xfsprogs tools it runs
#   csi-snapshotter                    IDLE STAND-IN: pause under that name (csi-hostpath driver only)
#   busybox (both tags in use)         Debian's busybox-static
#   pause                              build/pause/linux/pause.c, built with gcc -static
#   csi-resizer slot                   not named here: e2e/suite.sh tags one of the two below into it
#   upstream                           upstream csi-resizer v2.3.0 (test/infra/build-components.sh)
#   ours                               `npm run image` for amd64 (scripts/image.sh), copied by skopeo
#   ours-uid1000                       the same with its config's user set to 1000 (umoci config)
#
# The single-binary images are what the upstream images are (a static binary as entrypoint, run
# as root, plus /tmp); ours is our real image, unchanged (it runs as root, as upstream's does).
# Prints the directory holding the tarballs and images.env (IMAGE names, the resizer slot's name
# and the two candidates for it) on the last line. Tarballs are cached by their inputs' hash.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache=${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}
store=$cache/e2e-images
mkdir -p "$store"
log() { echo "[e2e/images] $*" >&2; }

[ -n "${E2E_COMPONENTS_ENV:-}" ] || E2E_COMPONENTS_ENV=$(bash "$here/build.sh" | tail -n1)
# shellcheck disable=SC1090
source "$E2E_COMPONENTS_ENV"

exec 9>"$store/lock"
flock 9

k8s_dir=$(cd "$here/components" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes)
# The CSI mock driver's manifests, and the csi-hostpath driver's (docs/e2e.md, "Other specs").
manifests=("$k8s_dir/test/e2e/testing-manifests/storage-csi/mock" "$k8s_dir/test/e2e/testing-manifests/storage-csi/hostpath/hostpath")
manifest_image() { # repository basename -> the one image reference the manifests use for it
  local refs
  refs=$(for d in "${manifests[@]}"; do grep -ho "image: *[^ ]*/$1:[^ ]*" "$d"/*.yaml; done | sed 's/image: *//' | sort -u)
  [ "$(echo "$refs" | grep -c .)" = 1 ] || { log "expected one image for $1 in ${manifests[*]}, found: ${refs:-none}"; exit 1; }
  echo "$refs"
}
e2e_list_image() { # name in test/utils/image/manifest.go (Pause, BusyBox) -> registry/name:tag
  local file=$k8s_dir/test/utils/image/manifest.go line registry_field registry name tag
  line=$(grep -E "^\s*configs\[$1\] = Config\{" "$file") || { log "no configs[$1] in $file"; exit 1; }
  registry_field=$(echo "$line" | sed -E 's/.*Config\{list\.([A-Za-z0-9]+), .*/\1/')
  name=$(echo "$line" | sed -E 's/.*Config\{[^,]*, "([^"]*)".*/\1/')
  tag=$(echo "$line" | sed -E 's/.*, "([^"]*)"\}.*/\1/')
  registry=$(grep -E "^\s*$registry_field: +\"" "$file" | head -n1 | sed -E 's/.*"([^"]*)".*/\1/')
  [ -n "$registry" ] && [ -n "$name" ] && [ -n "$tag" ] || { log "could not read the $1 image from $file"; exit 1; }
  echo "$registry/$name:$tag"
}

provisioner_image=$(manifest_image csi-provisioner)
attacher_image=$(manifest_image csi-attacher)
resizer_image=$(manifest_image csi-resizer)
registrar_image=$(manifest_image csi-node-driver-registrar)
hostpath_image=$(manifest_image hostpathplugin)
livenessprobe_image=$(manifest_image livenessprobe)
snapshotter_image=$(manifest_image csi-snapshotter)
busybox_manifest_image=$(manifest_image busybox)
busybox_e2e_image=$(e2e_list_image BusyBox)
pause_image=$(e2e_list_image Pause)

self_hash=$(sha256sum "$0" | cut -c1-12)
hash_of() { cat "$@" | sha256sum | cut -c1-12; }

# A docker-archive (what `docker save` writes) of one layer: the rootfs directory.
docker_archive() { # out rootfs "entrypoint json" "cmd json" name...
  local out=$1 rootfs=$2 entrypoint=$3 cmd=$4; shift 4
  local work layer_sha config config_sha tags="" name
  work=$(mktemp -d)
  tar --create --file "$work/layer.tar" --directory "$rootfs" --sort=name --mtime=@0 \
    --owner=0 --group=0 --numeric-owner --format=posix --pax-option=delete=atime,delete=ctime .
  layer_sha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  config="{\"architecture\":\"amd64\",\"os\":\"linux\",\"created\":\"1970-01-01T00:00:00Z\",\"config\":{\"User\":\"0\",\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Entrypoint\":$entrypoint,\"Cmd\":$cmd,\"WorkingDir\":\"/\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$layer_sha\"]}}"
  config_sha=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$work/$config_sha.json"
  mkdir "$work/$layer_sha" && mv "$work/layer.tar" "$work/$layer_sha/layer.tar"
  for name in "$@"; do tags="$tags${tags:+,}\"$name\""; done
  printf '[{"Config":"%s.json","RepoTags":[%s],"Layers":["%s/layer.tar"]}]' "$config_sha" "$tags" "$layer_sha" >"$work/manifest.json"
  tar --create --file "$out.tmp" --directory "$work" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner manifest.json "$config_sha.json" "$layer_sha"
  mv "$out.tmp" "$out"
  rm -rf "$work"
}

# An image of one static binary at /<name>, its entrypoint, with an empty /tmp.
binary_image() { # out binary path-in-image name...
  local out=$1 binary=$2 path=$3; shift 3
  local rootfs
  rootfs=$(mktemp -d)
  install -D -m 0755 "$binary" "$rootfs$path"
  install -d -m 1777 "$rootfs/tmp"
  docker_archive "$out" "$rootfs" "[\"$path\"]" "null" "$@"
  rm -rf "$rootfs"
}

# The loopfs test driver with the Debian tools it runs (losetup, mke2fs, e2fsck, resize2fs, e2undo,
# mkfs.xfs, xfs_growfs), each with the shared libraries ldd lists; /etc/mtab is the kernel's
# mount table, where resize2fs and xfs_growfs look a filesystem's mount point up.
loopfs_tools=(losetup mke2fs e2fsck resize2fs e2undo mkfs.xfs xfs_growfs)
loopfs_tool_files() { # every file the tools bring: the tools, their libraries, mke2fs.conf
  local tool path
  for tool in "${loopfs_tools[@]}"; do
    path=$(command -v "$tool") || { log "$tool is not installed (e2e/build.sh installs it)"; exit 1; }
    echo "$path"
    ldd "$path" | grep -o '/[^ ]*'
  done | sort -u
  echo /etc/mke2fs.conf
}
loopfs_image() { # out name...
  local out=$1 rootfs file; shift
  rootfs=$(mktemp -d)
  install -D -m 0755 "$LOOPFS_DRIVER_BIN" "$rootfs/loopfs-testdriver"
  for file in $loopfs_files; do install -D -m "$(stat -c %a "$file")" "$file" "$rootfs$file"; done
  ln -s /proc/self/mounts "$rootfs/etc/mtab"
  install -d -m 1777 "$rootfs/tmp"
  docker_archive "$out" "$rootfs" '["/loopfs-testdriver"]' "null" "$@"
  rm -rf "$rootfs"
}

busybox_image() { # out name...
  local out=$1 rootfs applet; shift
  rootfs=$(mktemp -d)
  install -D -m 0755 /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
  done
  install -d -m 1777 "$rootfs/tmp"
  install -d -m 0755 "$rootfs/etc"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  docker_archive "$out" "$rootfs" "null" '["/bin/sh"]' "$@"
  rm -rf "$rootfs"
}

built=()
want() { # file: remember it; true when it must be built (a cached one is touched: in use)
  built+=("$1")
  if [ -f "$1" ]; then touch "$1"; return 1; fi
}

f=$store/pause-$(hash_of "$PAUSE_BIN" "$0").tar
want "$f" && { log "pause -> $pause_image"; binary_image "$f" "$PAUSE_BIN" /pause "$pause_image"; }
f=$store/busybox-$(hash_of /bin/busybox "$0").tar
want "$f" && { log "busybox -> $busybox_manifest_image, $busybox_e2e_image"; busybox_image "$f" "$busybox_manifest_image" "$busybox_e2e_image"; }
f=$store/csi-provisioner-$(hash_of "$CSI_PROVISIONER_BIN" "$0").tar
want "$f" && { log "csi-provisioner $CSI_PROVISIONER_VERSION -> $provisioner_image"; binary_image "$f" "$CSI_PROVISIONER_BIN" /csi-provisioner "$provisioner_image"; }
f=$store/csi-attacher-$(hash_of "$CSI_ATTACHER_BIN" "$0").tar
want "$f" && { log "csi-attacher $CSI_ATTACHER_VERSION -> $attacher_image"; binary_image "$f" "$CSI_ATTACHER_BIN" /csi-attacher "$attacher_image"; }
f=$store/standin-node-driver-registrar-$(hash_of "$REGISTRAR_STANDIN_BIN" "$0").tar
want "$f" && { log "node-driver-registrar stand-in -> $registrar_image"; binary_image "$f" "$REGISTRAR_STANDIN_BIN" /csi-node-driver-registrar "$registrar_image"; }
f=$store/standin-hostpathplugin-$(hash_of "$HOSTPATH_STANDIN_BIN" "$0").tar
want "$f" && { log "hostpathplugin stand-in -> $hostpath_image"; binary_image "$f" "$HOSTPATH_STANDIN_BIN" /hostpathplugin "$hostpath_image"; }

f=$store/standin-livenessprobe-$(hash_of "$LIVENESSPROBE_STANDIN_BIN" "$0").tar
want "$f" && { log "livenessprobe stand-in -> $livenessprobe_image"; binary_image "$f" "$LIVENESSPROBE_STANDIN_BIN" /livenessprobe "$livenessprobe_image"; }
loopfs_files=$(loopfs_tool_files) # a plain assignment, so a missing tool stops the script
# shellcheck disable=SC2086 # one path a word
loopfs_key=$(hash_of "$LOOPFS_DRIVER_BIN" $loopfs_files "$0")
loopfs_driver_image=localhost/csi-resizer-e2e/loopfs-testdriver:$loopfs_key
f=$store/loopfs-testdriver-$loopfs_key.tar
want "$f" && { log "loopfs test driver -> $loopfs_driver_image"; loopfs_image "$f" "$loopfs_driver_image"; }

# An idle stand-in: the pause binary under the snapshotter's name. The csi-hostpath driver's pod
# has a snapshotter container; none of the specs we run takes a snapshot.
f=$store/idle-csi-snapshotter-$(hash_of "$PAUSE_BIN" "$0").tar
want "$f" && { log "idle stand-in (pause) -> $snapshotter_image"; binary_image "$f" "$PAUSE_BIN" /pause "$snapshotter_image"; }

upstream_name=localhost/csi-resizer-e2e/upstream:$UPSTREAM_RESIZER_VERSION
f=$store/csi-resizer-upstream-$(hash_of "$UPSTREAM_RESIZER_BIN" "$0").tar
want "$f" && { log "upstream csi-resizer $UPSTREAM_RESIZER_VERSION -> $upstream_name"; binary_image "$f" "$UPSTREAM_RESIZER_BIN" /csi-resizer "$upstream_name"; }

# Ours: the image `npm run image` builds, for this machine's architecture, keyed by the commit
# and any uncommitted change to what goes into it.
# (--version prints the commit and whether the tree was dirty, so both are part of the key.)
ours_key=$(cd "$root" && { git rev-parse HEAD; git status --porcelain | grep -q . && echo dirty; git diff HEAD -- src scripts package.json package-lock.json tsconfig.json tsconfig.build.json; git ls-files --others --exclude-standard src scripts; } | sha256sum | cut -c1-12)
ours_version=$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$root/package.json")
ours_name=localhost/csi-resizer-e2e/ours:$ours_version-$ours_key
# Ours with one change, its config's user 1000 instead of 0, as `runAsUser: 1000` would run it:
# beside a driver whose socket only root may open it cannot connect (docs/e2e.md, "The image user").
ours_uid1000_name=localhost/csi-resizer-e2e/ours-uid1000:$ours_version-$ours_key
f=$store/csi-resizer-ours-$ours_key-$self_hash.tar
f_uid1000=$store/csi-resizer-ours-uid1000-$ours_key-$self_hash.tar
want "$f_uid1000" || true
if want "$f" || [ ! -f "$f_uid1000" ]; then
  log "our image (npm run image, amd64) -> $ours_name, and with user 1000 -> $ours_uid1000_name"
  oci=$(mktemp -d)
  bash "$root/scripts/image.sh" --out "$oci/layout" --arch amd64 >&2
  # The layout names the index "<version>" and each architecture's manifest "<version>-<arch>".
  skopeo copy --quiet "oci:$oci/layout:$ours_version-amd64" "docker-archive:$f.tmp:$ours_name" >&2
  umoci config --no-history --image "$oci/layout:$ours_version-amd64" --tag uid1000 --config.user 1000:1000 >&2
  skopeo copy --quiet "oci:$oci/layout:uid1000" "docker-archive:$f_uid1000.tmp:$ours_uid1000_name" >&2
  mv "$f.tmp" "$f"
  mv "$f_uid1000.tmp" "$f_uid1000"
  rm -rf "$oci"
fi

# The set in use: a directory of links to this run's tarballs, and their names; one per checkout,
# so runs from two worktrees at once do not swap each other's images.
current=$store/current-$(printf '%s' "$root" | sha256sum | cut -c1-12)
rm -rf "$current.tmp" && mkdir -p "$current.tmp"
for f in "${built[@]}"; do ln -s "$f" "$current.tmp/$(basename "$f")"; done
cat >"$current.tmp/images.env" <<EOF
PAUSE_IMAGE=$pause_image
BUSYBOX_IMAGE=$busybox_e2e_image
REGISTRAR_IMAGE=$registrar_image
HOSTPATH_IMAGE=$hostpath_image
LOOPFS_DRIVER_IMAGE=$loopfs_driver_image
PROVISIONER_IMAGE=$provisioner_image
RESIZER_SLOT_IMAGE=$resizer_image
RESIZER_UPSTREAM_IMAGE=$upstream_name
RESIZER_UPSTREAM_VERSION=$UPSTREAM_RESIZER_VERSION
RESIZER_OURS_IMAGE=$ours_name
RESIZER_OURS_VERSION=$ours_version
RESIZER_OURS_UID1000_IMAGE=$ours_uid1000_name
EOF
rm -rf "$current" && mv "$current.tmp" "$current"
# Tarballs not used for a week: older builds of the same images.
find "$store" -maxdepth 1 -name '*.tar' -mtime +7 -delete 2>/dev/null || true
echo "$current"
