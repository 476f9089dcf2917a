// The layer map of docs/architecture.md ("Layers"), checked by `npm run lint` and `npm test`
// (scripts/check-layers.ts). Imports point toward more basic layers:
//
//   base ← model ← csi, kube, queue, flags ← controller, usage ← resize, modify, autogrow ← diagnose ← app ← main.ts
//   observability: from any layer; it imports only base and model
//   inside kube: api ← wire, cache (the port, then its HTTP implementation and the caches built on it)
//
// Unit tests (*.test.ts beside their module) may import any layer and the test support code;
// everything else in src/ ships and may not. The parser is swc: TypeScript 7's npm package has no
// classic compiler API for the tsc parser.

const LAYERS = [['base'], ['model'], ['csi', 'kube', 'queue', 'flags'], ['controller', 'usage'], ['resize', 'modify', 'autogrow'], ['diagnose'], ['app']];
const KUBE_LAYERS = [['api'], ['wire', 'cache']];
const SHIPPED = { path: '^src/', pathNot: '\\.test\\.ts$' };

/** One rule per folder of `root` (named `prefix` + folder): it imports none of its own rank's siblings and nothing above it. */
function layerRules(root, prefix, layers, also = []) {
  return layers.flatMap((rank, r) =>
    rank.map((folder) => {
      const above = layers
        .slice(r + 1)
        .flat()
        .concat(rank.filter((f) => f !== folder));
      return {
        name: `${prefix}${folder}`,
        comment: `${root}${folder}/ imports only layers below it (docs/architecture.md, Layers)`,
        severity: 'error',
        from: { path: `^${root}${folder}/`, pathNot: '\\.test\\.ts$' },
        to: { path: [`^${root}(${above.join('|')})/`, ...also] },
      };
    }),
  );
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules('src/', 'layer-', LAYERS, ['^src/main\\.ts$']),
    ...layerRules('src/kube/', 'layer-kube-', KUBE_LAYERS),
    {
      name: 'layer-observability',
      comment: 'observability is used from any layer, so it imports only base and model',
      severity: 'error',
      from: { path: '^src/observability/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(base|model|observability)/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-test-code-in-src',
      comment: 'shipped code imports no test, bench or script code (unit tests may)',
      severity: 'error',
      from: SHIPPED,
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-dev-dependencies-in-src',
      comment: 'shipped code imports only runtime dependencies (package.json "dependencies")',
      severity: 'error',
      from: SHIPPED,
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'grpc-only-in-csi',
      comment: 'the gRPC library and the generated messages stay behind the CsiClient port',
      severity: 'error',
      from: { path: SHIPPED.path, pathNot: [SHIPPED.pathNot, '^src/csi/'] },
      to: { path: ['^node_modules/@grpc/', '^node_modules/@bufbuild/', '^src/csi/proto/'] },
    },
    {
      name: 'metrics-library-only-in-observability',
      comment: 'prom-client is used by observability/ alone; the other layers record through its ports and types (the REST client port, rest-client.ts)',
      severity: 'error',
      from: { path: SHIPPED.path, pathNot: [SHIPPED.pathNot, '^src/observability/'] },
      to: { path: '^node_modules/prom-client/' },
    },
    {
      name: 'http-client-only-in-transports',
      comment:
        "the HTTP client (node:https, or an HTTP library) is used by the transports alone: the API server's (kube/http.ts, kube/connections.ts) and the usage sources' (usage/http-get.ts)",
      severity: 'error',
      from: { path: SHIPPED.path, pathNot: [SHIPPED.pathNot, '^src/kube/wire/(http|connections)\\.ts$', '^src/usage/http-get\\.ts$'] },
      to: { path: ['^node_modules/undici/', '^(node:)?https$'] },
    },
    {
      name: 'controllers-see-ports',
      comment: 'the controllers reach the driver, the API server and the usage sources only through ports, never the transport',
      severity: 'error',
      from: { path: '^src/(controller|resize|modify|autogrow)/', pathNot: '\\.test\\.ts$' },
      to: {
        path: ['^src/csi/(connection\\.ts|proto/)', '^src/kube/wire/', '^src/usage/(http-get|kubelet-source|prometheus-source)\\.ts$'],
      },
    },
    {
      name: 'model-no-io',
      comment: 'model/ is data and pure decisions: no I/O modules, no logging',
      severity: 'error',
      from: { path: '^src/model/', pathNot: '\\.test\\.ts$' },
      to: { path: ['^src/observability/', '^(node:)?(fs|fs/promises|net|tls|http|https|http2|child_process|dgram|dns|worker_threads)$'] },
    },
    {
      name: 'no-unresolvable',
      comment: 'every import resolves (dist-main.js runs beside the bundle it imports, in dist/)',
      severity: 'error',
      from: { pathNot: '^scripts/dist-main\\.js$' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // A tree whose node_modules is a link (test/layers.test.ts's) is read as laid out.
    preserveSymlinks: true,
    exclude: { path: '^(dist|bench/\\.build)/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
