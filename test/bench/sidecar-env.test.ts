// The environment the bench gives both sidecars: the pod's, not the developer's shell's. A node
// variable such as NODE_EXTRA_CA_CERTS would make ours parse a CA bundle no pod of ours has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podEnv, sidecarEnv } from '../../bench/lib/resizer.js';

function withEnv(vars: Record<string, string>, body: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

test('runtime-specific variables of the machine are left out, the rest kept', () => {
  withEnv(
    { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt', NODE_OPTIONS: '--inspect', GOGC: '50', GOMAXPROCS: '1', SIDECAR_ENV_PROBE: 'kept' },
    () => {
      const env = podEnv();
      for (const name of ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'GOGC', 'GOMAXPROCS']) assert.equal(env[name], undefined, name);
      assert.equal(env['SIDECAR_ENV_PROBE'], 'kept');
      assert.equal(env['PATH'], process.env['PATH']);
    },
  );
});

test('both sidecars get the same pod environment, extras last', () => {
  withEnv({ MALLOC_ARENA_MAX: '7' }, () => {
    const ours = sidecarEnv('ours', { NODE_NAME: 'n1' });
    const upstream = sidecarEnv('upstream', { NODE_NAME: 'n1' });
    assert.deepEqual(ours, upstream);
    assert.equal(ours['NODE_NAME'], 'n1');
    assert.equal(ours['MALLOC_ARENA_MAX'], '7');
  });
  assert.equal(podEnv({ NODE_EXTRA_CA_CERTS: '/explicit' })['NODE_EXTRA_CA_CERTS'], '/explicit');
});
