// The fast subset of the chaos suite inside `npm test`: our resizer (the real command, from its
// sources) on its own control plane, a small burst, and the faults that finish quickly, with
// shorter outages than `npm run chaos` (restarting kube-apiserver alone takes 15 s or more on a
// busy 2-core machine, so that fault and the etcd ones run only there). Each must end with every claim final at the size it asked
// for and no wrong size anywhere. The full suite, side by side with upstream: `npm run chaos`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';
import { DEFAULT_SETTINGS, startChaosEnv, type StartedChaosEnv } from './env.js';
import { driverKill, proxyBlackhole, recreate } from './faults.js';
import { runFault } from './harness.js';

const SETTINGS = {
  ...DEFAULT_SETTINGS,
  n: 20,
  faultAtMs: 600,
  blackholeMs: 3000,
  driverDownMs: 1000,
  boundMs: 60_000,
  driverDelayMs: 300,
  workers: 4,
};

test('chaos, fast subset: no claim lost and no wrong size under each fault', { timeout: 300_000 }, async (t) => {
  const log = process.env['CHAOS_VERBOSE'] === '1' ? (l: string) => process.stderr.write(`[chaos] ${l}\n`) : () => {};
  let env: StartedChaosEnv | undefined;
  let failed = false;
  try {
    env = await startChaosEnv({ settings: SETTINGS, oursEntry: join(repoRoot, 'src', 'main.ts'), upstreamBin: '', log });
    for (const fault of [driverKill, proxyBlackhole, recreate]) {
      await t.test(fault.id, async () => {
        try {
          const r = await runFault(env!, fault, 'ours');
          const summary = `${r.facts.join('; ')}\n${r.problems.join('\n')}`;
          assert.equal(r.lost, 0, `lost claims under ${fault.id}: ${summary}`);
          assert.equal(r.wrongSizes, 0, `wrong sizes under ${fault.id}: ${summary}`);
          assert.notEqual(r.timeToAllFinalS, undefined);
        } catch (err) {
          failed = true; // keep the cluster's and the resizers' logs
          throw err;
        }
      });
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await env?.stop({ keepLogs: failed });
  }
});
