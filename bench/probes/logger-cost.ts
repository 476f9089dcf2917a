// Cost of one log line: `node --import tsx bench/probes/logger-cost.ts` (or on the compiled dist/ with
// `node bench/probes/logger-cost.ts --dist` after `npm run build`, where positions come from .js.map files).
// Prints µs per line for a written text line, a JSON line, the call-site capture alone, and a
// v(n) line below -v (with and without --vmodule).
import { performance } from 'node:perf_hooks';
import { callerOf } from '../../src/observability/log/caller.js';
import { createLogger, kRef } from '../../src/observability/log/logger.js';

const N = Number(process.env['N'] ?? 200_000);
const sink = () => {};

// CPU time (user + system) rather than wall time: on a shared machine, waiting for a core is not the logger's cost.
function measure(name: string, fn: () => void): void {
  for (let i = 0; i < 2_000; i++) fn();
  const wallStart = performance.now();
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) fn();
  const used = process.cpuUsage(start);
  const cpuUs = (used.user + used.system) / N;
  const wallUs = ((performance.now() - wallStart) * 1000) / N;
  console.log(`${name.padEnd(44)} ${cpuUs.toFixed(2)} µs CPU (${wallUs.toFixed(2)} µs wall)`);
}

const text = createLogger({ verbosity: 0, format: 'text', write: sink });
const json = createLogger({ verbosity: 0, format: 'json', write: sink });
const withVmodule = createLogger({ verbosity: 0, format: 'text', write: sink, vmodule: 'nomatch=5' });
const pvc = kRef('default', 'pvc-1');
function probe() {
  return callerOf(probe);
}
measure('text line, 2 fields', () => text.info('Resize PVC finished', { PVC: pvc, capacity: '2Gi' }));
measure('json line, 2 fields', () => json.info('Resize PVC finished', { PVC: pvc, capacity: '2Gi' }));
measure('call-site capture alone (cached position)', () => probe());
measure('v(4) line below -v', () => text.v(4).info('Started PVC processing', { key: 'default/pvc-1' }));
measure('v(4) line below -v, --vmodule set', () => withVmodule.v(4).info('Started PVC processing', { key: 'default/pvc-1' }));
