import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatVersion, parseBuildInfo, parseDescribe, readVersion } from './version.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

test('formatVersion: git-describe style suffix, bare version without a commit', () => {
  for (const { source, want } of [
    { source: { commit: SHA, dirty: false }, want: '0.1.0-g0123456789ab' },
    { source: { commit: SHA, dirty: true }, want: '0.1.0-g0123456789ab-dirty' },
    { source: undefined, want: '0.1.0' },
  ]) {
    assert.equal(formatVersion('0.1.0', source), want);
  }
});

test('parseDescribe and parseBuildInfo accept commits and reject anything else', () => {
  assert.deepEqual(parseDescribe(`${SHA}\n`), { commit: SHA, dirty: false });
  assert.deepEqual(parseDescribe(`${SHA}-dirty\n`), { commit: SHA, dirty: true });
  assert.equal(parseDescribe('fatal: not a git repository'), undefined);
  assert.equal(parseDescribe(''), undefined);
  assert.deepEqual(parseBuildInfo(`{"commit":"${SHA}","dirty":false}`), { commit: SHA, dirty: false });
  assert.deepEqual(parseBuildInfo(`{"commit":"${SHA}","dirty":true}`), { commit: SHA, dirty: true });
  assert.equal(parseBuildInfo('{}'), undefined);
  assert.equal(parseBuildInfo('{"commit":"main"}'), undefined);
  assert.equal(parseBuildInfo('not json'), undefined);
});

function layout(t: { after(fn: () => void): void }): { root: string; mainUrl: (dir: string) => string } {
  const root = mkdtempSync(join(tmpdir(), 'rz-version-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'package.json'), '{"version":"9.8.7"}');
  return { root, mainUrl: (dir) => pathToFileURL(join(root, dir, 'main.js')).href };
}

test('readVersion from dist: the stamp beside main.js decides, no git asked', (t) => {
  const { root, mainUrl } = layout(t);
  mkdirSync(join(root, 'dist'));
  writeFileSync(join(root, 'dist', 'build-info.json'), `{"commit":"${SHA}","dirty":false}`);
  assert.equal(readVersion(mainUrl('dist')), '9.8.7-g0123456789ab');
  writeFileSync(join(root, 'dist', 'build-info.json'), '{}');
  assert.equal(readVersion(mainUrl('dist')), '9.8.7');
});

test('readVersion from a checkout: git at run time, -dirty when a tracked file changed', (t) => {
  const { root, mainUrl } = layout(t);
  mkdirSync(join(root, 'src'));
  // No .git beside package.json: no commit.
  assert.equal(readVersion(mainUrl('src')), '9.8.7');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', 'package.json');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
  const head = git('rev-parse', 'HEAD');
  assert.equal(readVersion(mainUrl('src')), `9.8.7-g${head.slice(0, 12)}`);
  writeFileSync(join(root, 'package.json'), '{"version":"9.8.8"}');
  assert.equal(readVersion(mainUrl('src')), `9.8.8-g${head.slice(0, 12)}-dirty`);
});
