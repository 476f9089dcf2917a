// The chaos verdict on plain data: what counts as lost and what as a wrong size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verify, type ClaimView, type VerifyInput } from './verify.js';

const G = 1n << 30n;
const claim = (capacityGi: number, settled = true, volumeName = 'pv-a'): ClaimView => ({
  uid: 'u',
  volumeName,
  capacityBytes: BigInt(capacityGi) * G,
  settled,
});

function input(o: { claim?: ClaimView; pvGi?: number; volumeGi?: number; retired?: { pvGi: number; volumeGi: number } }): VerifyInput {
  const pvs = new Map([['pv-a', { capacityBytes: BigInt(o.pvGi ?? 2) * G, volumeHandle: 'h-a' }]]);
  const volumes = new Map([['h-a', BigInt(o.volumeGi ?? 2) * G]]);
  const retired: Array<{ pv: string; allowedBytes: bigint[] }> = [];
  if (o.retired) {
    pvs.set('pv-old', { capacityBytes: BigInt(o.retired.pvGi) * G, volumeHandle: 'h-old' });
    volumes.set('h-old', BigInt(o.retired.volumeGi) * G);
    retired.push({ pv: 'pv-old', allowedBytes: [1n * G, 2n * G] });
  }
  return { expected: new Map([['a', 2n * G]]), claims: o.claim === undefined ? new Map() : new Map([['a', o.claim]]), pvs, volumes, retired };
}

const cases: Array<{ name: string; in: VerifyInput; lost: number; wrong: number }> = [
  { name: 'final at the size asked, PV and volume agree', in: input({ claim: claim(2) }), lost: 0, wrong: 0 },
  { name: 'volume grown, PV and claim not yet: lost, not wrong', in: input({ claim: claim(1), pvGi: 1 }), lost: 1, wrong: 0 },
  { name: 'resize condition left: lost', in: input({ claim: claim(2, false) }), lost: 1, wrong: 0 },
  { name: 'claim deleted and not back: lost', in: input({}), lost: 1, wrong: 0 },
  { name: 'PV says 2Gi, volume has 1Gi: wrong', in: input({ claim: claim(2), volumeGi: 1 }), lost: 0, wrong: 1 },
  { name: 'volume beyond the request: wrong', in: input({ claim: claim(2), volumeGi: 3 }), lost: 0, wrong: 1 },
  { name: 'claim final while its PV still says 1Gi: wrong', in: input({ claim: claim(2), pvGi: 1 }), lost: 0, wrong: 1 },
  { name: 'retired PV at an old size: fine', in: input({ claim: claim(2), retired: { pvGi: 2, volumeGi: 2 } }), lost: 0, wrong: 0 },
  { name: "retired PV grown to its successor's size: wrong", in: input({ claim: claim(2), retired: { pvGi: 1, volumeGi: 3 } }), lost: 0, wrong: 1 },
];

for (const c of cases) {
  test(c.name, () => {
    const out = verify(c.in);
    assert.equal(out.lost.length, c.lost, `lost: ${out.lost.join(' | ')}`);
    assert.equal(out.wrong.length, c.wrong, `wrong: ${out.wrong.join(' | ')}`);
  });
}
