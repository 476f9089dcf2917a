// The verdict of one node chaos run, judged without I/O from what the run read at its end: each
// claim's PVC and PV, the size of its volume's file, what its pod sees (df, sha256sum -c) and
// the loopfs driver's operation log (docs/e2e.md, "Faults on the node", says what each count means).
import type { LoopfsOperation } from '../loopfs-oplog.js';

export type ClaimKind = 'online-xfs' | 'offline-ext4' | 'offline-xfs';

export interface ClaimPlan {
  name: string;
  volumeId: string;
  pvName: string;
  kind: ClaimKind;
  /** The pod whose view counts: the writer of an online claim, the reader of an offline one. */
  pod: string;
  fromBytes: bigint;
  toBytes: bigint;
}

export interface ClaimState {
  capacityBytes?: bigint;
  conditions: ReadonlyArray<{ type: string; status: string; message?: string }>;
  allocatedResourceStatuses: Readonly<Record<string, string>>;
  pvBytes?: bigint;
  /** The volume's backing file, as the driver has it. */
  fileBytes?: bigint;
}

export interface PodView {
  /** df's size of /data in the pod, in bytes. */
  dfBytes?: number;
  /** sha256sum -c's lines. */
  checks: readonly string[];
  /** Why the pod could not be asked (not running, exec failed). */
  error?: string;
}

export interface VerifyInput {
  claims: readonly ClaimPlan[];
  states: ReadonlyMap<string, ClaimState>;
  views: ReadonlyMap<string, PodView>;
  log: readonly LoopfsOperation[];
  /** Files each pod wrote (and sha256sum -c must list as OK). */
  files: number;
}

export interface Verdict {
  /** Not final at the requested size (status capacity, no resize condition, no resize status). */
  lost: string[];
  /**
   * Of those, claims whose PV is at the requested size and whose resize status leaves only the
   * node's part (NodeResizePending, NodeResizeInProgress, NodeResizeFailed): the resizer did its
   * part, kubelet or the node plugin did not finish theirs.
   */
  lostOnNode: string[];
  /** PVC, PV, file or filesystem at a size other than requested, or beyond it. */
  wrongSizes: string[];
  /** A checksum that no longer matches, a file missing, or a pod that could not be asked. */
  dataDamaged: string[];
  /** Any condition but 1.37's `Unused` left on a claim. */
  badConditions: string[];
  /** A layer (file or filesystem) grown more than once. */
  grownTwice: string[];
  /** A final claim with a layer the log never shows grown. */
  neverGrown: string[];
  /** ControllerExpandVolume calls for a volume whose file already had the size: retries after a success. */
  controllerCallsAfterSuccess: number;
  /** Calls the driver began and never ended (it was killed mid-call), by operation. */
  interrupted: Record<string, number>;
  /** Calls that ended in an error, by operation and gRPC code. */
  failedCalls: Record<string, number>;
}

const NODE_STATUSES = new Set(['NodeResizePending', 'NodeResizeInProgress', 'NodeResizeFailed']);
const ALLOWED_CONDITIONS = new Set(['Unused']);
const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending', 'ControllerResizeError', 'NodeResizeError']);
const GI = 1n << 30n;
const fmt = (b: bigint | number | undefined) => {
  if (b === undefined) return 'none';
  const v = BigInt(b);
  return v % GI === 0n ? `${v / GI}Gi` : `${v}B`;
};

/** Whether the claim's resize is over at its size: what "final" means in every count. */
export function isFinal(state: ClaimState | undefined, toBytes: bigint): boolean {
  if (!state) return false;
  const resizing = state.conditions.some((c) => RESIZE_CONDITIONS.has(c.type));
  return state.capacityBytes === toBytes && !resizing && Object.keys(state.allocatedResourceStatuses).length === 0;
}

/** df shows a filesystem less its own metadata: within 8 % of the volume (XFS keeps 64 MiB for its log). */
export function dfMatches(dfBytes: number, volumeBytes: bigint): boolean {
  const b = BigInt(dfBytes);
  return b <= volumeBytes && b >= (volumeBytes * 92n) / 100n;
}

function countBy(records: readonly LoopfsOperation[], key: (r: LoopfsOperation) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) out[key(r)] = (out[key(r)] ?? 0) + 1;
  return out;
}

/** Start lines whose operation never wrote its end line. */
export function interruptedCalls(log: readonly LoopfsOperation[]): LoopfsOperation[] {
  const ended = new Set(log.filter((r) => r.phase === 'end').map((r) => r.opId));
  return log.filter((r) => r.phase === 'start' && !ended.has(r.opId));
}

function sizeProblems(c: ClaimPlan, s: ClaimState, view: PodView | undefined, final: boolean): string[] {
  const p: string[] = [];
  if (s.capacityBytes !== undefined && s.capacityBytes > c.toBytes) p.push(`claim ${fmt(s.capacityBytes)} is beyond the ${fmt(c.toBytes)} asked`);
  if (s.pvBytes === undefined) p.push('PV missing');
  else if (s.pvBytes > c.toBytes) p.push(`PV ${fmt(s.pvBytes)} is beyond the ${fmt(c.toBytes)} asked`);
  else if (final && s.pvBytes !== c.toBytes) p.push(`final, but the PV is ${fmt(s.pvBytes)}`);
  if (s.fileBytes === undefined) p.push('volume file missing');
  else if (s.pvBytes !== undefined && s.pvBytes > s.fileBytes) p.push(`PV ${fmt(s.pvBytes)} says more than the volume's ${fmt(s.fileBytes)}`);
  else if (s.fileBytes !== c.toBytes && final) p.push(`final, but the volume is ${fmt(s.fileBytes)}`);
  if (final && view?.dfBytes !== undefined && !dfMatches(view.dfBytes, c.toBytes)) p.push(`final, but df in ${c.pod} shows ${view.dfBytes} bytes`);
  return p;
}

function dataProblems(c: ClaimPlan, view: PodView | undefined, files: number): string | undefined {
  if (!view) return `${c.name}: pod ${c.pod} was not asked`;
  if (view.error !== undefined) return `${c.name}: pod ${c.pod}: ${view.error}`;
  const ok = view.checks.filter((l) => /^file-\d+: OK$/.test(l)).length;
  if (ok !== files || view.checks.length !== files) return `${c.name}: sha256sum -c in ${c.pod}: ${view.checks.join('; ') || 'no output'}`;
  return undefined;
}

function growthProblems(
  c: ClaimPlan,
  log: readonly LoopfsOperation[],
  final: boolean,
  interrupted: readonly LoopfsOperation[],
): { twice: string[]; never: string[] } {
  const twice: string[] = [];
  const never: string[] = [];
  for (const layer of ['file', 'filesystem'] as const) {
    const grown = log.filter((r) => r.phase === 'end' && r.volume === c.volumeId && r.layer === layer && r.result === 'grown');
    if (grown.length > 1) {
      twice.push(
        `${c.name} (${c.volumeId}): ${layer} grown ${grown.length} times: ${grown.map((r) => `${r.op} ${fmt(r.sizeBefore)}→${fmt(r.sizeAfter)} by ${r.host ?? r.pid}`).join(', ')}`,
      );
    }
    // A call killed between growing and logging leaves the growth without its line.
    const cut = interrupted.some((r) => r.volume === c.volumeId && (layer === 'file' ? r.op === 'ControllerExpandVolume' : r.op !== 'ControllerExpandVolume'));
    if (final && grown.length === 0 && !cut) never.push(`${c.name} (${c.volumeId}): final, but the log shows no ${layer} growth`);
  }
  return { twice, never };
}

export function verify(input: VerifyInput): Verdict {
  const v: Verdict = {
    lost: [],
    lostOnNode: [],
    wrongSizes: [],
    dataDamaged: [],
    badConditions: [],
    grownTwice: [],
    neverGrown: [],
    controllerCallsAfterSuccess: 0,
    interrupted: {},
    failedCalls: {},
  };
  const interrupted = interruptedCalls(input.log);
  for (const c of input.claims) {
    const s = input.states.get(c.name);
    if (!s) {
      v.lost.push(`${c.name}: claim missing`);
      continue;
    }
    const final = isFinal(s, c.toBytes);
    if (!final) {
      const conds = s.conditions.map((x) => x.type).join(',');
      const status = s.allocatedResourceStatuses['storage'];
      if (s.pvBytes === c.toBytes && status !== undefined && NODE_STATUSES.has(status)) v.lostOnNode.push(`${c.name} (${c.kind}): PV grown, ${status}`);
      v.lost.push(
        `${c.name} (${c.kind}): status ${fmt(s.capacityBytes)}, PV ${fmt(s.pvBytes)}${conds ? `, conditions ${conds}` : ''}${Object.keys(s.allocatedResourceStatuses).length ? `, ${JSON.stringify(s.allocatedResourceStatuses)}` : ''}`,
      );
    }
    const view = input.views.get(c.name);
    const sizes = sizeProblems(c, s, view, final);
    if (sizes.length > 0) v.wrongSizes.push(`${c.name} (${c.kind}): ${sizes.join('; ')}`);
    const data = dataProblems(c, view, input.files);
    if (data !== undefined) v.dataDamaged.push(data);
    const bad = s.conditions.filter((x) => !ALLOWED_CONDITIONS.has(x.type));
    if (bad.length > 0) v.badConditions.push(`${c.name}: ${bad.map((x) => `${x.type}=${x.status}${x.message ? ` (${x.message})` : ''}`).join('; ')}`);
    const g = growthProblems(c, input.log, final, interrupted);
    v.grownTwice.push(...g.twice);
    v.neverGrown.push(...g.never);
  }
  const volumes = new Set(input.claims.map((c) => c.volumeId));
  const ends = input.log.filter((r) => r.phase === 'end' && volumes.has(r.volume));
  v.controllerCallsAfterSuccess = ends.filter((r) => r.op === 'ControllerExpandVolume' && r.result === 'unchanged').length;
  v.interrupted = countBy(
    interrupted.filter((r) => volumes.has(r.volume)),
    (r) => r.op,
  );
  v.failedCalls = countBy(
    ends.filter((r) => r.result === 'error'),
    (r) => `${r.op} ${r.code ?? '?'}`,
  );
  return v;
}
