// The short node chaos run that `npm test` runs (about a minute; the full set is `npm run chaos --
// --node`; docs/e2e.md, "Faults on the node"): on a fresh one-node cluster, four claims of the
// loopfs driver (two xfs under running pods, one ext4 and one xfs offline), each holding files a
// pod wrote, grown at once by our image in a two-replica controller Deployment; kubelet is
// SIGKILLed as soon as it has begun a NodeExpandVolume and started again two seconds later. It
// passes when every claim is final at its new size in the PVC, the PV, the volume's file and the df
// its pod sees, every checksum still matches, no condition is left, the driver's log shows each
// layer grown exactly once, and the teardown leaves nothing behind.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { test } from 'node:test';
import { NODE_FAULTS } from './node-chaos/faults.js';
import { DEFAULT_NODE_SETTINGS, pinImages, runNodeFault } from './node-chaos/run.js';

test('node chaos, short: kubelet SIGKILLed mid-NodeExpandVolume; every claim grown once, data intact, nothing left', { timeout: 75 * 60_000 }, async (t) => {
  const fault = NODE_FAULTS.find((f) => f.id === 'kubelet-kill');
  assert.ok(fault);
  const logDir = mkdtempSync('/tmp/rz-node-chaos-test-');
  const settings = { ...DEFAULT_NODE_SETTINGS, n: 4, files: 2, fileMiB: 1, boundMs: 240_000 };
  const r = await runNodeFault(settings, fault, 'ours', logDir, (line) => t.diagnostic(line), pinImages(`${logDir}/images`));
  t.diagnostic(`phases (s): ${JSON.stringify(r.phasesS)}; fault at ${r.faultAtS} s, all PVs grown ${r.controllerDoneS} s, all final ${r.allFinalS} s`);
  for (const f of r.facts) t.diagnostic(f);
  t.diagnostic(`logs in ${logDir}`);
  assert.equal(r.error, undefined, `the run did not finish: ${r.error}`);
  assert.ok(r.faultAtS !== undefined && r.facts.some((f) => f.startsWith('kubelet SIGKILLed')), `the fault never struck: ${r.facts.join('; ')}`);
  assert.deepEqual(
    { lost: r.lost, wrongSizes: r.wrongSizes, dataDamaged: r.dataDamaged, badConditions: r.badConditions, grownTwice: r.grownTwice, neverGrown: r.neverGrown },
    { lost: 0, wrongSizes: 0, dataDamaged: 0, badConditions: 0, grownTwice: 0, neverGrown: 0 },
    r.problems.join('\n'),
  );
  assert.ok(r.allFinalS !== undefined);
  assert.ok(r.teardownClean, `e2e/node.sh left something behind; see ${logDir}/node.log`);
});
