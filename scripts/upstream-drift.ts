// `npm run upstream-drift -- [VERSION]`: builds upstream's csi-resizer at VERSION (default: the
// pinned one) into the shared cache and prints how it differs from ours in flags, feature gates
// and start-up metric families, each difference marked with its documented reason or as not
// documented (docs/development.md, "Upstream drift"). Exit status 1 when, for the pinned version,
// a difference is not documented or a documented one is gone; 2 on bad usage.
import { useCluster } from '../test/cluster/test-cluster.js';
import { checkDrift } from '../test/infra/upstream-drift/drift.js';
import { classify, loadKnownDifferences } from '../test/infra/upstream-drift/known-differences.js';
import { formatReport } from '../test/infra/upstream-drift/report.js';
import { pinnedUpstreamVersion } from '../test/infra/upstream-drift/sidecars.js';

const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help') || args.length > 1) {
  process.stderr.write('usage: npm run upstream-drift -- [VERSION]   (VERSION: an upstream release such as v2.2.0; default the pinned one)\n');
  process.exit(args.length > 1 ? 2 : 0);
}
const version = args[0] ?? pinnedUpstreamVersion();
const { entries: known, problems } = loadKnownDifferences();
for (const problem of problems) process.stderr.write(`[upstream-drift] documented list: ${problem}\n`);
const result = await checkDrift({
  version,
  cluster: useCluster,
  moreGates: known.filter((k) => k.area === 'gate' && !k.name.endsWith('*')).map((k) => k.name),
  progress: (line) => process.stderr.write(`[upstream-drift] ${line}\n`),
});
const classified = classify(result.differences, known);
process.stdout.write(`${formatReport(result, classified)}\n`);
const pinned = version === pinnedUpstreamVersion();
if (!pinned) process.stdout.write(`(the documented list is written for the pinned ${pinnedUpstreamVersion()}; against ${version} it only annotates)\n`);
process.exitCode = pinned && (classified.undocumented.length > 0 || classified.stale.length > 0 || problems.length > 0) ? 1 : 0;
