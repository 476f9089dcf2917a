import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CsiAddressError, parseCsiAddress } from './driver-channel.js';

test('an absolute path becomes a unix:// target', () => {
  assert.deepEqual(parseCsiAddress('/csi/csi.sock'), { target: 'unix:///csi/csi.sock', socketPath: '/csi/csi.sock' });
});

test('unix:///path is kept', () => {
  assert.deepEqual(parseCsiAddress('unix:///var/lib/csi/sockets/pluginproxy/csi.sock'), {
    target: 'unix:///var/lib/csi/sockets/pluginproxy/csi.sock',
    socketPath: '/var/lib/csi/sockets/pluginproxy/csi.sock',
  });
});

for (const bad of ['', 'csi.sock', 'unix://csi/csi.sock', 'unix:/csi.sock', 'tcp://127.0.0.1:10000', 'localhost:10000', 'dns:///x', 'unix://', '/']) {
  test(`${JSON.stringify(bad)} is rejected with a clear message`, () => {
    assert.throws(
      () => parseCsiAddress(bad),
      (err: unknown) => {
        assert.ok(err instanceof CsiAddressError);
        assert.match(err.message, /only unix domain sockets are supported; use an absolute path/);
        return true;
      },
    );
  });
}
