#!/usr/bin/env bash
# Runs Kubernetes' own e2e specs against the node e2e/node.sh started (its variables are in the
# environment), once per resizer image: before each run the image the manifests name for the
# csi-resizer sidecar is re-tagged in containerd to point at that image, and the run's reports
# are written as <results>/junit-<image>[-NAME].xml and report-<image>[-NAME].json (only the specs
# that ran); e2e/summary.ts then writes <results>/summary[-NAME].md (the table) from the JUnit files.
#
#   e2e/suite.sh [--suite mock|hostpath|all] [--images upstream,ours,ours-uid1000] [--procs N]
#                [--procs-ours N] [--focus REGEX --name NAME] [--skip REGEX] [--results DIR]
#
# --suite picks the specs (docs/e2e.md): mock is "[sig-storage] CSI Mock volume expansion",
# reported without a NAME; hostpath is the csi-hostpath driver's volume-expand and volume-modify
# specs (default fs; the VolumeAttributesClass specs, which the mock driver has none of),
# NAME=hostpath; all, the default, runs both, one after the other. --focus runs other specs
# instead, reported under --name. --procs runs the specs in parallel through the ginkgo CLI (each
# spec has its own namespace and driver instance); 1 runs them one after the other. Our image as
# uid 1000 (ours-uid1000) cannot reach the driver in these manifests (docs/e2e.md, "The image user"),
# so its specs only wait for their own timeouts: --procs-ours runs them wider (14 by default).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
log() { echo "[e2e/suite $(date +%H:%M:%S)] $*" >&2; }

mock_focus='CSI Mock volume expansion'
hostpath_focus='\[Driver: csi-hostpath\] \[Testpattern: Dynamic PV \(default fs\)[^\]]*\] (volume-expand|volume-modify)'

images=upstream,ours
suite=all
focus=''
skip=''
procs=${E2E_PROCS:-4}
procs_ours=${E2E_PROCS_OURS:-14}
results=$root/e2e/results
name=''
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --images) images=$2; shift 2 ;;
    --focus) focus=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --procs-ours) procs_ours=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# Each run: focus|name.
runs=()
if [ -n "$focus" ]; then
  runs+=("$focus|$name")
else
  case "$suite" in
    mock) runs+=("$mock_focus|") ;;
    hostpath) runs+=("$hostpath_focus|hostpath") ;;
    all) runs+=("$mock_focus|" "$hostpath_focus|hostpath") ;;
    *) echo "unknown suite $suite (mock, hostpath or all)" >&2; exit 2 ;;
  esac
fi
: "${E2E_NODE_ENV:?run this under e2e/node.sh run}"
# shellcheck disable=SC1090
source "$E2E_COMPONENTS_ENV"
# shellcheck disable=SC1091
source "$E2E_IMAGES_DIR/images.env"
mkdir -p "$results"

ctr=("$CTR_BIN" --address "$E2E_CONTAINERD_SOCKET" -n k8s.io)
digest_of() { "${ctr[@]}" images ls "name==$1" | awk 'NR == 2 {print $3}'; }

# The ginkgo CLI runs only a binary whose name ends in .test.
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/rz-e2e-suite.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
ln -s "$E2E_TEST_BIN" "$run_dir/e2e.test"

source "$root/scripts/node-runtime.sh"
use_node_runtime

status=0
IFS=, read -r -a image_list <<<"$images"
for run in "${runs[@]}"; do
  focus=${run%|*}
  name=${run##*|}
  suffix=${name:+-$name}
  for image in "${image_list[@]}"; do
    case "$image" in
      upstream) candidate=$RESIZER_UPSTREAM_IMAGE; version="upstream csi-resizer $RESIZER_UPSTREAM_VERSION"; width=$procs ;;
      ours) candidate=$RESIZER_OURS_IMAGE; version="our csi-resizer $RESIZER_OURS_VERSION ($RESIZER_OURS_IMAGE)"; width=$procs ;;
      ours-uid1000) candidate=$RESIZER_OURS_UID1000_IMAGE; version="our csi-resizer $RESIZER_OURS_VERSION, image user 1000 ($RESIZER_OURS_UID1000_IMAGE)"; width=$procs_ours ;;
      *) echo "unknown image $image (upstream, ours or ours-uid1000)" >&2; exit 2 ;;
    esac
    "${ctr[@]}" images tag --force "$candidate" "$RESIZER_SLOT_IMAGE" >/dev/null
    [ "$(digest_of "$RESIZER_SLOT_IMAGE")" = "$(digest_of "$candidate")" ] || { log "re-tagging $RESIZER_SLOT_IMAGE failed"; exit 1; }
    log "$RESIZER_SLOT_IMAGE is now $version, $(digest_of "$candidate")"

    out=$run_dir/$image$suffix
    mkdir -p "$out"
    start=$SECONDS
    args=(--kubeconfig="$E2E_KUBECONFIG" --provider=skeleton --kubelet-root-dir="$E2E_KUBELET_ROOT_DIR" --kubectl-path="$KUBECTL_BIN")
    ginkgo=("$GINKGO_BIN" run --procs="$width" --timeout=55m --output-dir="$out"
      --json-report="report.json" --focus="$focus" --no-color --silence-skips --poll-progress-after=5m)
    [ -n "$skip" ] && ginkgo+=(--skip="$skip")
    [ "$width" -gt 1 ] && ginkgo+=(-p)
    log "running [$focus] with $version, $width process(es); output in $results/e2e-$image$suffix.log"
    "${ginkgo[@]}" "$run_dir/e2e.test" -- "${args[@]}" >"$results/e2e-$image$suffix.log" 2>&1 || status=1
    # The reports list all ~7,600 specs of the binary; keep the ones that ran.
    "$REPORT_TRIM_BIN" --in "$out/report.json" --json "$results/report-$image$suffix.json" --junit "$results/junit-$image$suffix.xml"
    log "$image$suffix: $(grep -o 'Ran [0-9]* of [0-9]* Specs in [0-9.]* seconds' "$results/e2e-$image$suffix.log" | tail -n1) ($((SECONDS - start))s); $(grep -E '^(SUCCESS|FAIL)!' "$results/e2e-$image$suffix.log" | tail -n1)"
  done

  summary=(--results "$results" --suffix="$suffix")
  # The README's table comes from the main run: the mock specs, upstream's image and ours, the
  # default results directory.
  if [ -z "$name" ] && [ "$focus" = "$mock_focus" ] && [ "$results" = "$root/e2e/results" ] && [ "$images" = upstream,ours ]; then
    summary+=(--readme "$root/README.md")
  fi
  node --import tsx "$root/e2e/summary.ts" "${summary[@]}" >&2 || status=1
done
exit "$status"
