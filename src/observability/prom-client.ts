// The parts of prom-client the resizer uses, each from its own file. prom-client's index also
// loads its Pushgateway (node:zlib among others) and its cluster aggregator, which the resizer
// never calls, and its default collectors (node:perf_hooks, node:v8), which are set up only once
// start-up is over: about 15 ms of CPU at every start of the bundle, so they load when asked for.
// The classes are the same objects the index exports (Node and esbuild load each file once).
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import Registry from 'prom-client/lib/registry.js';

export { Counter, Gauge, Histogram, Registry };

/** prom-client's collectDefaultMetrics, loaded on first use. */
export async function loadCollectDefaultMetrics(): Promise<typeof import('prom-client').collectDefaultMetrics> {
  return (await import('prom-client/lib/defaultMetrics.js')).default;
}
