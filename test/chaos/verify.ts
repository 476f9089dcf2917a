// The end state of a chaos run, judged without I/O: which claims were lost (not final at the size
// they asked for) and which sizes are wrong (a PV that claims more than its volume has, anything
// beyond what was asked, or a retired PV of a deleted claim grown to a size only its successor
// asked for).
import { quantityBytes } from '../cluster/fixtures.js';

/** A claim as the verifier needs it, read from a PVC object. */
export interface ClaimView {
  uid: string;
  volumeName: string;
  capacityBytes: bigint | undefined;
  /** No resize condition and no allocatedResourceStatuses left. */
  settled: boolean;
}

export interface PvView {
  capacityBytes: bigint;
  volumeHandle: string;
}

export interface VerifyInput {
  /** Claim name → the size its final state must show. */
  expected: ReadonlyMap<string, bigint>;
  claims: ReadonlyMap<string, ClaimView>;
  pvs: ReadonlyMap<string, PvView>;
  /** Volume handle → bytes, as the driver has them. */
  volumes: ReadonlyMap<string, bigint>;
  /** PVs whose claim was deleted and recreated: the sizes each may show (its old claim's sizes). */
  retired: ReadonlyArray<{ pv: string; allowedBytes: readonly bigint[] }>;
}

export interface VerifyOutcome {
  lost: string[];
  /** One line per wrong size, naming the object and the sizes. */
  wrong: string[];
}

const GI = 1n << 30n;
const fmt = (b: bigint | undefined) => (b === undefined ? 'none' : b % GI === 0n ? `${b / GI}Gi` : `${b}B`);

export function claimView(o: any): ClaimView {
  const conditions: Array<{ type: string }> = o.status?.conditions ?? [];
  const resizing = conditions.some((c) => c.type === 'Resizing' || c.type === 'FileSystemResizePending' || c.type === 'ControllerResizeError');
  const capacity: string | undefined = o.status?.capacity?.storage;
  return {
    uid: o.metadata.uid,
    volumeName: o.spec?.volumeName ?? '',
    capacityBytes: capacity === undefined ? undefined : quantityBytes(capacity),
    settled: !resizing && o.status?.allocatedResourceStatuses?.storage === undefined,
  };
}

export function pvView(o: any): PvView {
  return { capacityBytes: quantityBytes(o.spec.capacity.storage), volumeHandle: o.spec.csi?.volumeHandle ?? '' };
}

export function verify(input: VerifyInput): VerifyOutcome {
  const lost: string[] = [];
  const wrong: string[] = [];
  for (const [name, want] of input.expected) {
    const claim = input.claims.get(name);
    if (!claim) {
      lost.push(`${name}: claim missing`);
      continue;
    }
    const final = claim.settled && claim.capacityBytes === want;
    if (!final) lost.push(`${name}: status ${fmt(claim.capacityBytes)}${claim.settled ? '' : ' (resize in progress)'}, wants ${fmt(want)}`);
    const pv = input.pvs.get(claim.volumeName);
    if (!pv) {
      wrong.push(`${name}: its PV ${claim.volumeName} is missing`);
      continue;
    }
    const has = input.volumes.get(pv.volumeHandle);
    const problems: string[] = [];
    if (has === undefined) problems.push('no such volume on the driver');
    else if (pv.capacityBytes > has) problems.push('the PV says more than the volume has');
    if (pv.capacityBytes > want || (has ?? 0n) > want) problems.push(`more than the ${fmt(want)} asked for`);
    if (claim.capacityBytes !== undefined && claim.capacityBytes > pv.capacityBytes) problems.push('the claim says more than its PV');
    if (final && pv.capacityBytes !== want) problems.push('final, but the PV differs');
    if (problems.length > 0) {
      wrong.push(`${name}: claim ${fmt(claim.capacityBytes)}, PV ${claim.volumeName} ${fmt(pv.capacityBytes)}, volume ${fmt(has)}: ${problems.join('; ')}`);
    }
  }
  for (const r of input.retired) {
    const pv = input.pvs.get(r.pv);
    if (!pv) {
      wrong.push(`retired PV ${r.pv} is missing`);
      continue;
    }
    const has = input.volumes.get(pv.volumeHandle);
    const allowed = (b: bigint | undefined) => b !== undefined && r.allowedBytes.includes(b);
    if (!allowed(pv.capacityBytes) || !allowed(has) || pv.capacityBytes > (has ?? 0n)) {
      wrong.push(`retired PV ${r.pv} ${fmt(pv.capacityBytes)}, volume ${fmt(has)}: allowed ${r.allowedBytes.map(fmt).join(' or ')}`);
    }
  }
  return { lost, wrong };
}
