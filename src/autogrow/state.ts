// What auto-grow remembers about a claim, kept on the claim itself (docs/auto-grow.md, "State on
// the claim"): the last grow, which the cooldown counts from, and the limit it last reported as
// reached. On the claim, not in memory, so a restart or a new leader keeps the cooldown and does
// not report a limit twice. The last grow is one JSON annotation, written with the request in the
// same patch, so the request and the record of it cannot disagree.
import type { Pvc } from '../model/objects.js';
import { formatBytes, parseQuantity } from '../model/quantity.js';
import { metaTime } from '../model/time.js';
import { AutoGrowAnnotation } from './annotations.js';

export interface LastGrow {
  /** When the request was raised (whole seconds, as metav1.Time). */
  readonly atMs: number;
  /** status.capacity when it was raised. */
  readonly fromBytes: bigint;
  /** The request written. */
  readonly toBytes: bigint;
  /** The filesystem capacity the usage sample reported then. */
  readonly filesystemBytes: bigint;
}

export type GrowStateReading = { readonly kind: 'ok'; readonly lastGrow: LastGrow | undefined } | { readonly kind: 'invalid'; readonly message: string };

interface LastGrowJson {
  at: string;
  from: string;
  to: string;
  filesystemBytes: string;
}

/** metav1.Time as it is written: RFC 3339 in UTC (an offset is accepted, as the API server does). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DECIMAL = /^\d+$/;

export function readLastGrow(pvc: Pvc): GrowStateReading {
  const text = pvc.metadata.annotations?.[AutoGrowAnnotation.LastGrow];
  if (text === undefined) return { kind: 'ok', lastGrow: undefined };
  const invalid = (why: string): GrowStateReading => ({
    kind: 'invalid',
    message: `${AutoGrowAnnotation.LastGrow}: ${JSON.stringify(text)} ${why} (remove the annotation to reset auto-grow's record of this claim)`,
  });
  let json: Partial<Record<keyof LastGrowJson, unknown>>;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    return invalid('is not JSON');
  }
  if (typeof json !== 'object' || json === null) return invalid('is not a JSON object');
  const { at, from, to, filesystemBytes } = json;
  if (typeof at !== 'string' || !RFC3339.test(at) || Number.isNaN(Date.parse(at))) return invalid('has no RFC 3339 time in "at"');
  if (typeof filesystemBytes !== 'string' || !DECIMAL.test(filesystemBytes)) return invalid('has no decimal byte count in "filesystemBytes"');
  let fromBytes: bigint;
  let toBytes: bigint;
  try {
    fromBytes = parseQuantity(String(from)).toBytes();
    toBytes = parseQuantity(String(to)).toBytes();
  } catch {
    return invalid('has no quantities in "from" and "to"');
  }
  return { kind: 'ok', lastGrow: { atMs: Date.parse(at), fromBytes, toBytes, filesystemBytes: BigInt(filesystemBytes) } };
}

/** The annotation recording a grow, to be written in the patch that raises the request. */
export function lastGrowAnnotation(grow: LastGrow): Record<string, string> {
  const json: LastGrowJson = {
    at: metaTime(grow.atMs),
    from: formatBytes(grow.fromBytes, 'BinarySI'),
    to: formatBytes(grow.toBytes, 'BinarySI'),
    filesystemBytes: grow.filesystemBytes.toString(),
  };
  return { [AutoGrowAnnotation.LastGrow]: JSON.stringify(json) };
}

/** Whether the claim already says its limit of `limit` was reported as reached. */
export function limitAlreadyReported(pvc: Pvc, limit: string): boolean {
  return pvc.metadata.annotations?.[AutoGrowAnnotation.LimitReached] === limit;
}

/** The annotation recording that the limit was reported as reached. */
export function limitReachedAnnotation(limit: string): Record<string, string> {
  return { [AutoGrowAnnotation.LimitReached]: limit };
}
