// The layer check bites: scripts/check-layers.ts, with the repository's own rules, run over a small
// tree in a temp directory that breaks each rule once, finds exactly those breaks, and finds
// nothing in a tree that keeps them. `npm run lint` runs the same check over the repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkLayers } from '../scripts/check-layers.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A tree of files (path → source) in a temp directory with the repository's package.json and node_modules. */
function tree(t: { after: (fn: () => void) => void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rz-layers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

const exported = (name: string) => `export const ${name} = 1;\n`;

test('layers: each kind of break in a tree is found, and only those', async (t) => {
  const dir = tree(t, {
    'src/main.ts': "import { top } from './app/top.js';\nexport const main = top;\n",
    'src/app/top.ts': exported('top'),
    // model is below app
    'src/model/upward.ts': "import { top } from '../app/top.js';\nexport const upward = top;\n",
    // resize and modify are siblings
    'src/resize/sibling.ts': "import { m } from '../modify/m.js';\nexport const sibling = m;\n",
    'src/modify/m.ts': exported('m'),
    // observability imports only base and model
    'src/observability/log.ts': "import { k } from '../kube/k.js';\nexport const log = k;\n",
    'src/kube/k.ts': exported('k'),
    // a cycle of three, type-only imports included (reported once, from its first module)
    'src/base/a.ts': "import type { B } from './b.js';\nexport type A = B | 1;\n",
    'src/base/b.ts': "import { a } from './c.js';\nexport type B = typeof a;\n",
    'src/base/c.ts': "import type { A } from './a.js';\nexport const a: A | 2 = 2;\n",
    // shipped code importing test code (a unit test may)
    'src/queue/q.ts': "import { helper } from '../../test/support/helper.js';\nexport const q = helper;\n",
    'src/queue/q.test.ts': "import { helper } from '../../test/support/helper.js';\nexport const t = helper;\n",
    'test/support/helper.ts': exported('helper'),
    // the gRPC library outside csi/
    'src/resize/wire.ts': "import { status } from '@grpc/grpc-js';\nexport const wire = status;\n",
    // the metrics library outside observability
    'src/kube/metered.ts': "import { Counter } from 'prom-client';\nexport const metered = Counter;\n",
    // an HTTP client outside the kube transport
    'src/diagnose/raw.ts': "import { request } from 'node:https';\nexport const raw = request;\n",
    // a controller reaching for the transport
    'src/modify/transport.ts': "import { h } from '../kube/wire/http.js';\nexport const transport = h;\n",
    // auto-grow reaching past the usage port for an adapter
    'src/autogrow/adapter.ts': "import { s } from '../usage/kubelet-source.js';\nexport const adapter = s;\n",
    'src/usage/kubelet-source.ts': exported('s'),
    'src/kube/wire/http.ts': exported('h'),
    // the API port importing its transport, and a cache reaching past the port for it
    'src/kube/api/patch.ts': "import { h } from '../wire/http.js';\nexport const patch = h;\n",
    'src/kube/cache/informer.ts': "import { h } from '../wire/http.js';\nexport const informer = h;\n",
    // model doing I/O
    'src/model/io.ts': "import { readFileSync } from 'node:fs';\nexport const io = readFileSync;\n",
    // a dev dependency in shipped code
    'src/csi/dev.ts': "import * as yaml from '@kubernetes/client-node';\nexport const dev = yaml;\n",
    // a library's internal file that is not listed
    'src/observability/deep.ts': "import Summary from 'prom-client/lib/summary.js';\nexport const deep = Summary;\n",
    // an import that resolves to nothing
    'src/controller/missing.ts': "import { gone } from './gone.js';\nexport const missing = gone;\n",
  });
  const found = (await checkLayers({ baseDir: dir })).map((v) => `${v.rule} ${v.from}`).sort();
  assert.deepEqual(found, [
    'controllers-see-ports src/autogrow/adapter.ts',
    'controllers-see-ports src/modify/transport.ts',
    'grpc-only-in-csi src/resize/wire.ts',
    'http-client-only-in-transports src/diagnose/raw.ts',
    'layer-kube-api src/kube/api/patch.ts',
    'layer-kube-cache src/kube/cache/informer.ts',
    'layer-model src/model/upward.ts',
    'layer-observability src/observability/log.ts',
    'layer-resize src/resize/sibling.ts',
    'metrics-library-only-in-observability src/kube/metered.ts',
    'model-no-io src/model/io.ts',
    'no-circular src/base/a.ts',
    'no-deep-imports src/observability/deep.ts',
    'no-dev-dependencies-in-src src/csi/dev.ts',
    'no-test-code-in-src src/queue/q.ts',
    'no-unresolvable src/controller/missing.ts',
  ]);
});

test('layers: a tree that keeps the map has no violations', async (t) => {
  const dir = tree(t, {
    'src/main.ts': "import { top } from './app/top.js';\nexport const main = top;\n",
    'src/app/top.ts':
      "import { d } from '../diagnose/d.js';\nimport { r } from '../resize/r.js';\nimport { g } from '../autogrow/g.js';\nexport const top = d + r + g;\n",
    'src/diagnose/d.ts': "import { r } from '../resize/r.js';\nimport { f } from '../flags/f.js';\nexport const d = r + f;\n",
    'src/flags/f.ts': "import { q } from '../model/q.js';\nexport const f = q;\n",
    'src/resize/r.ts': "import { e } from '../controller/e.js';\nimport { log } from '../observability/log.js';\nexport const r = e + log;\n",
    'src/controller/e.ts':
      "import { c } from '../csi/client.js';\nimport { k } from '../kube/api/client.js';\nimport { i } from '../kube/cache/informer.js';\nexport const e = c + k + i;\n",
    'src/csi/client.ts': "import { status } from '@grpc/grpc-js';\nimport { q } from '../model/q.js';\nexport const c = status.OK + q;\n",
    // inside kube: the port, its HTTP implementation and the cache built on it
    'src/kube/api/client.ts': "import { q } from '../../model/q.js';\nexport const k = q;\n",
    'src/kube/wire/http.ts': "import { Agent } from 'node:https';\nimport { k } from '../api/client.js';\nexport const agent = k + (Agent ? 1 : 0);\n",
    'src/kube/cache/informer.ts': "import { k } from '../api/client.js';\nexport const i = k;\n",
    'src/app/wiring.ts': "import { agent } from '../kube/wire/http.js';\nexport const wiring = agent;\n",
    // auto-grow sees the usage port, which sits beside the engine; the usage transport may use node:https
    'src/autogrow/g.ts': "import { u } from '../usage/volume-usage.js';\nimport { k } from '../kube/api/client.js';\nexport const g = u + k;\n",
    'src/usage/volume-usage.ts': "import { get } from './http-get.js';\nimport { k } from '../kube/api/client.js';\nexport const u = k + (get ? 1 : 0);\n",
    'src/usage/http-get.ts': "import { request } from 'node:https';\nexport const get = request;\n",
    'src/model/q.ts': "import { b } from '../base/b.js';\nexport const q = b;\n",
    'src/base/b.ts': exported('b'),
    'src/observability/log.ts': "import { Counter } from 'prom-client';\nimport { q } from '../model/q.js';\nexport const log = q + (Counter ? 1 : 0);\n",
    'src/observability/log.test.ts':
      "import { helper } from '../../test/support/helper.js';\nimport { top } from '../app/top.js';\nexport const t = helper + top;\n",
    'test/support/helper.ts': "import { load } from 'js-yaml';\nexport const helper = load('1') as number;\n",
  });
  assert.deepEqual(await checkLayers({ baseDir: dir }), []);
});
