// The pinned upstream csi-resizer and ours agree on flags, feature gates and start-up metric
// families, but for the documented list of deliberate differences (docs/development.md, "Upstream
// drift"). Runs upstream's real binary (built into the shared cache when missing) and ours against
// the test cluster. On failure the message is the script's report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../../cluster/test-cluster.js';
import { checkDrift } from './drift.js';
import { classify, loadKnownDifferences } from './known-differences.js';
import { formatReport } from './report.js';
import { pinnedUpstreamVersion } from './sidecars.js';

test('the documented list names a reason and an existing docs/differences page for each entry', () => {
  const { problems } = loadKnownDifferences();
  assert.deepEqual(problems, []);
});

test(`upstream ${pinnedUpstreamVersion()} and ours differ exactly as documented`, { timeout: 3_600_000 }, async () => {
  const { entries } = loadKnownDifferences();
  const result = await checkDrift({
    version: pinnedUpstreamVersion(),
    cluster: useCluster,
    moreGates: entries.filter((k) => k.area === 'gate' && !k.name.endsWith('*')).map((k) => k.name),
  });
  const classified = classify(result.differences, entries);
  const report = formatReport(result, classified);
  assert.ok(result.counts.flags.upstream > 20 && result.counts.metrics.upstream > 20, `upstream showed too little to compare:\n${report}`);
  assert.deepEqual(
    classified.undocumented.map((d) => `${d.area} ${d.name}: ${d.aspect}`),
    [],
    `differences not in test/infra/upstream-drift/known-differences.yaml:\n${report}`,
  );
  assert.deepEqual(
    classified.stale.map((e) => `${e.area} ${e.name}: ${e.aspect}`),
    [],
    `entries of known-differences.yaml that name no difference any more:\n${report}`,
  );
});
