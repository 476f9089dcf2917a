// The README's first command, `npm run demo`, end to end: scripts/demo.ts starts its own control
// plane and two mock drivers, runs our resizer once per driver, and must end with every PVC in the
// state the README describes (grow done, node waiting for kubelet, backfill recovered after the
// driver refused the shrink) and exit 0. A log line the demo waits for that no longer exists, or
// any other break, fails here instead of in front of a newcomer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';

test('npm run demo: the three PVCs end as the README says, and everything stops', { timeout: 600_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'demo.ts')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 540_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  assert.equal(code, 0, out.slice(-4000));
  const final = out.slice(out.indexOf('final state'));
  assert.match(final, /\n\s+grow\s+mock\.csi\.k8s\.io\s+2Gi\s+2Gi\s+2Gi\s+2Gi\s+done\b/);
  assert.match(final, /\n\s+node\s+node\.mock\.csi\.k8s\.io\s+3Gi\s+3Gi\s+1Gi\s+3Gi\s+node_pending\s+NodeResizePending/);
  assert.match(final, /\n\s+backfill\s+mock\.csi\.k8s\.io\s+6Gi\s+6Gi\s+6Gi\s+6Gi\s+done\b/);
  assert.match(out, /csi-resizer for mock\.csi\.k8s\.io stopped on SIGTERM: exit 0/);
  assert.match(out, /csi-resizer for node\.mock\.csi\.k8s\.io stopped on SIGTERM: exit 0/);
});
