// The checked-in generated code (gen/) is exactly what `npm run gen:proto` makes from csi.proto
// today: buf and protoc-gen-es run into a temporary directory, and every file is compared byte
// for byte, so an edit of csi.proto (or of gen/) without regenerating fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../test/cluster/components.js';
import { buf } from '../../../test/support/buf-cli.js';

const GEN = join('src', 'csi', 'proto', 'gen');

test('src/csi/proto/gen matches csi.proto (regenerate: npm run gen:proto)', (t) => {
  const out = mkdtempSync(join(tmpdir(), 'rz-gen-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  buf(['generate', '--template', 'src/csi/proto/buf.gen.yaml', '-o', out]);
  const fresh = readdirSync(join(out, GEN)).sort();
  const checkedIn = readdirSync(join(repoRoot, GEN)).sort();
  assert.deepEqual(checkedIn, fresh);
  for (const file of fresh) {
    assert.ok(readFileSync(join(out, GEN, file)).equals(readFileSync(join(repoRoot, GEN, file))), `${file} differs from what csi.proto generates`);
  }
});
