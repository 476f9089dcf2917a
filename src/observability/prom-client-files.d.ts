// Types for the prom-client files src/observability/prom-client.ts imports one by one: each file's
// module.exports is the export of the same name in prom-client's own typings.
declare module 'prom-client/lib/defaultMetrics.js' {
  import { collectDefaultMetrics } from 'prom-client';
  export default collectDefaultMetrics;
}
declare module 'prom-client/lib/counter.js' {
  import { Counter } from 'prom-client';
  export default Counter;
}
declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from 'prom-client';
  export default Gauge;
}
declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from 'prom-client';
  export default Histogram;
}
declare module 'prom-client/lib/registry.js' {
  import { Registry } from 'prom-client';
  export default Registry;
}
