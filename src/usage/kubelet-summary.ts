// Reading the volume usage out of kubelet's summary API answer (`GET /stats/summary`,
// stats/v1alpha1 Summary): every pod's `volume` entries that name a claim (`pvcRef`), with the
// filesystem's capacity, available bytes, inodes, free inodes and the `time` kubelet read
// them at. Only the claims asked for are kept; a claim several pods on the node mount appears
// once per pod, and the newest entry wins. An entry without capacity or available bytes (kubelet
// leaves them out until its first reading) is not a sample. Pure: the transport is http-get.ts.
import type { VolumeUsage } from './volume-usage.js';

export class SummaryFormatError extends Error {
  constructor(message: string) {
    super(`kubelet summary: ${message}`);
    this.name = 'SummaryFormatError';
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A uint64 as JSON carries it: a non-negative whole number (exact up to 2^53, as JSON.parse reads it). */
function count(v: unknown): bigint | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? BigInt(Math.trunc(v)) : undefined;
}

/** The usage of each wanted claim (`namespace/name`) the summary reports. */
export function usageFromSummary(summary: unknown, wanted: ReadonlySet<string>): Map<string, VolumeUsage> {
  if (!isObject(summary)) throw new SummaryFormatError('the answer is not a JSON object');
  const pods = summary['pods'] ?? [];
  if (!Array.isArray(pods)) throw new SummaryFormatError('"pods" is not a list');
  const found = new Map<string, VolumeUsage>();
  for (const pod of pods) {
    const volumes = isObject(pod) ? pod['volume'] : undefined;
    if (!Array.isArray(volumes)) continue;
    for (const volume of volumes) {
      if (!isObject(volume) || !isObject(volume['pvcRef'])) continue;
      const ref = volume['pvcRef'];
      const key = `${String(ref['namespace'] ?? '')}/${String(ref['name'] ?? '')}`;
      if (!wanted.has(key)) continue;
      const usage = volumeUsage(volume);
      if (usage === undefined) continue;
      const known = found.get(key);
      if (known === undefined || usage.sampledAtMs > known.sampledAtMs) found.set(key, usage);
    }
  }
  return found;
}

function volumeUsage(volume: Json): VolumeUsage | undefined {
  const capacityBytes = count(volume['capacityBytes']);
  const availableBytes = count(volume['availableBytes']);
  const sampledAtMs = typeof volume['time'] === 'string' ? Date.parse(volume['time']) : Number.NaN;
  if (capacityBytes === undefined || availableBytes === undefined || Number.isNaN(sampledAtMs)) return undefined;
  const inodes = count(volume['inodes']);
  const inodesFree = count(volume['inodesFree']);
  return {
    capacityBytes,
    availableBytes,
    ...(inodes !== undefined && inodesFree !== undefined ? { inodes, inodesFree } : {}),
    sampledAtMs,
  };
}
