// Filling a claim from inside the pod that mounts it (busybox, the claim at /data), for the
// auto-grow tests and demo on the node: files of random bytes, each with its checksum in
// /data/SHA256SUMS, until the free space the pod's `df` shows is below a percentage of the
// filesystem: the numbers kubelet reports too (both are statfs of the same mount).
import assert from 'node:assert/strict';
import { kubectl } from './kubectl.js';
import type { NodeEnv } from './node-session.js';

export const FILL_FILE_MIB = 16;
/** Bound on the files one fill writes (a filesystem that never reports less free space). */
const MAX_FILES = 256;

// $1: the percentage. After the free space is below it, one more file, then one sync (XFS
// reserves the space of a write at once, so df sees it before the sync; it may give back some it
// set aside while writing, so the check is made again after the sync).
const FILL_SCRIPT = `set -e
pct=$1
cd /data
below() { set -- $(df -Pk /data | tail -n 1); [ $(($4 * 100)) -lt $(($2 * pct)) ]; }
n=$(ls | grep -c '^file-' || true)
i=0
write() {
  [ $i -lt ${MAX_FILES} ] || { echo "free space still not below $pct% after ${MAX_FILES} files" >&2; exit 1; }
  dd if=/dev/urandom of=file-$n bs=1M count=${FILL_FILE_MIB} 2>/dev/null
  sha256sum file-$n >> SHA256SUMS
  n=$((n + 1))
  i=$((i + 1))
}
while :; do
  while ! below; do write; done
  write
  sync
  if below; then break; fi
done
df -Pk /data | tail -n 1`;

export interface DfView {
  /** Filesystem size, used and available bytes, as the pod's df shows them. */
  readonly sizeBytes: number;
  readonly usedBytes: number;
  readonly availableBytes: number;
}

function parseDf(line: string | undefined): DfView {
  const fields = line?.trim().split(/\s+/) ?? [];
  const [size, used, available] = [1, 2, 3].map((i) => Number(fields[i]) * 1024);
  assert.ok(Number.isFinite(size) && Number.isFinite(used) && Number.isFinite(available), `not a df line: ${line}`);
  return { sizeBytes: size!, usedBytes: used!, availableBytes: available! };
}

/** Writes into the claim until less than pct % of it is free; returns df's view afterwards. */
export async function fillClaim(env: NodeEnv, pod: string, pct: number): Promise<DfView> {
  const out = await kubectl(env, '-n', 'default', 'exec', pod, '-c', 'app', '--', 'sh', '-c', FILL_SCRIPT, 'fill', String(pct));
  return parseDf(out.trim().split('\n').pop());
}

/** What the pod sees at /data now: df, and `sha256sum -c` of every file written so far. */
export async function podView(env: NodeEnv, pod: string): Promise<{ df: DfView; files: number; failed: string[] }> {
  const out = await kubectl(env, '-n', 'default', 'exec', pod, '-c', 'app', '--', 'sh', '-c', 'df -Pk /data | tail -n 1; cd /data && { sha256sum -c SHA256SUMS 2>&1 || true; }');
  const [dfLine, ...checks] = out.trim().split('\n');
  return { df: parseDf(dfLine), files: checks.filter((l) => / OK$/.test(l)).length, failed: checks.filter((l) => !/ OK$/.test(l)) };
}

/** A pod that mounts the claim at /data and idles until stopped (the fills run in it through exec). */
export const IDLE_SCRIPT = "trap 'exit 0' TERM; sleep 1000000 & wait";

export interface KubeletVolumeStats {
  readonly time: string;
  readonly capacityBytes: number;
  readonly availableBytes: number;
  readonly usedBytes: number;
}

/** Kubelet's last measurement of a claim (/stats/summary, through the API server's node proxy), if it has one. */
export async function kubeletVolumeStats(env: NodeEnv, claim: string): Promise<KubeletVolumeStats | undefined> {
  type Volume = Partial<KubeletVolumeStats> & { pvcRef?: { name: string; namespace: string } };
  const summary = JSON.parse(await kubectl(env, 'get', '--raw', `/api/v1/nodes/${env.nodeName}/proxy/stats/summary`)) as { pods?: { volume?: Volume[] }[] };
  const found = (summary.pods ?? []).flatMap((p) => p.volume ?? []).find((v) => v.pvcRef?.name === claim && v.pvcRef.namespace === 'default');
  if (found?.time === undefined || found.capacityBytes === undefined || found.availableBytes === undefined) return undefined;
  return { time: found.time, capacityBytes: found.capacityBytes, availableBytes: found.availableBytes, usedBytes: found.usedBytes ?? 0 };
}
