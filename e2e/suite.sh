#!/usr/bin/env bash
# Runs Kubernetes' own e2e specs against the node e2e/node.sh started (its variables are in the
# environment), once per resizer image: before each run the image the mock manifests name for the
# csi-resizer sidecar is re-tagged in containerd to point at that image, and the run's reports
# are written as <results>/junit-<image>.xml and <results>/report-<image>.json (only the specs
# that ran); e2e/summary.ts then writes <results>/summary.md (the table) from the JSON reports.
#
#   e2e/suite.sh [--images upstream,ours,ours-uid0] [--focus REGEX] [--skip REGEX] [--procs N]
#                [--results DIR] [--name NAME]
#
# --procs runs the specs in parallel through the ginkgo CLI (each spec has its own namespace and
# driver instance); 1 runs them one after the other. --name tags the report files
# (junit-<image>[-NAME].xml), for runs of other specs beside the main one.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
log() { echo "[e2e/suite $(date +%H:%M:%S)] $*" >&2; }

images=upstream,ours,ours-uid0
focus='CSI Mock volume expansion'
skip=''
procs=${E2E_PROCS:-4}
results=$root/e2e/results
name=''
while [ $# -gt 0 ]; do
  case "$1" in
    --images) images=$2; shift 2 ;;
    --focus) focus=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${E2E_NODE_ENV:?run this under e2e/node.sh run}"
# shellcheck disable=SC1090
source "$E2E_COMPONENTS_ENV"
# shellcheck disable=SC1091
source "$E2E_IMAGES_DIR/images.env"
mkdir -p "$results"
suffix=${name:+-$name}

ctr=("$CTR_BIN" --address "$E2E_CONTAINERD_SOCKET" -n k8s.io)
digest_of() { "${ctr[@]}" images ls "name==$1" | awk 'NR == 2 {print $3}'; }

# The ginkgo CLI runs only a binary whose name ends in .test.
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/rz-e2e-suite.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
ln -s "$E2E_TEST_BIN" "$run_dir/e2e.test"

status=0
IFS=, read -r -a image_list <<<"$images"
for image in "${image_list[@]}"; do
  case "$image" in
    upstream) candidate=$RESIZER_UPSTREAM_IMAGE; version="upstream csi-resizer $RESIZER_UPSTREAM_VERSION" ;;
    ours) candidate=$RESIZER_OURS_IMAGE; version="our csi-resizer $RESIZER_OURS_VERSION ($RESIZER_OURS_IMAGE)" ;;
    ours-uid0) candidate=$RESIZER_OURS_UID0_IMAGE; version="our csi-resizer $RESIZER_OURS_VERSION, image user 0 ($RESIZER_OURS_UID0_IMAGE)" ;;
    *) echo "unknown image $image (upstream, ours or ours-uid0)" >&2; exit 2 ;;
  esac
  # No resizer pod may still run the other image: every spec's namespace is gone by now, but a
  # failed run may leave one terminating.
  "${ctr[@]}" images tag --force "$candidate" "$RESIZER_SLOT_IMAGE" >/dev/null
  [ "$(digest_of "$RESIZER_SLOT_IMAGE")" = "$(digest_of "$candidate")" ] || { log "re-tagging $RESIZER_SLOT_IMAGE failed"; exit 1; }
  log "$RESIZER_SLOT_IMAGE is now $version, $(digest_of "$candidate")"

  out=$run_dir/$image
  mkdir -p "$out"
  start=$SECONDS
  args=(--kubeconfig="$E2E_KUBECONFIG" --provider=skeleton --kubelet-root-dir="$E2E_KUBELET_ROOT_DIR" --kubectl-path="$KUBECTL_BIN")
  ginkgo=("$GINKGO_BIN" run --procs="$procs" --timeout=55m --output-dir="$out"
    --json-report="report.json" --focus="$focus" --no-color --silence-skips --poll-progress-after=5m)
  [ -n "$skip" ] && ginkgo+=(--skip="$skip")
  [ "$procs" -gt 1 ] && ginkgo+=(-p)
  log "running [$focus] with $version, $procs process(es); output in $results/e2e-$image$suffix.log"
  "${ginkgo[@]}" "$run_dir/e2e.test" -- "${args[@]}" >"$results/e2e-$image$suffix.log" 2>&1 || status=1
  # The reports list all ~7,600 specs of the binary; keep the ones that ran.
  "$REPORT_TRIM_BIN" --in "$out/report.json" --json "$results/report-$image$suffix.json" --junit "$results/junit-$image$suffix.xml"
  log "$image: $(grep -o 'Ran [0-9]* of [0-9]* Specs in [0-9.]* seconds' "$results/e2e-$image$suffix.log" | tail -n1) ($((SECONDS - start))s); $(grep -E '^(SUCCESS|FAIL)!' "$results/e2e-$image$suffix.log" | tail -n1)"
done

source "$root/scripts/node-runtime.sh"
use_node_runtime
summary=(--results "$results" --suffix "$suffix")
# The README's table comes from the main run: both images, default focus and results directory.
if [ -z "$name" ] && [ "$results" = "$root/e2e/results" ] && [ "$images" = upstream,ours,ours-uid0 ]; then summary+=(--readme "$root/README.md"); fi
node --import tsx "$root/e2e/summary.ts" "${summary[@]}" >&2 || status=1
exit "$status"
