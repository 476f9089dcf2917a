import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { socketAccessProblem } from './socket-access.js';

function socketStat(uid: number, gid: number, mode: number): (path: string) => Stats {
  return () => ({ uid, gid, mode: 0o140000 | mode, isSocket: () => true }) as unknown as Stats;
}

test("a root driver's 0755 socket refuses another user, and the problem says who owns it and what to do", () => {
  const problem = socketAccessProblem('/csi/csi.sock', { uid: 1000, gids: [1000] }, socketStat(0, 0, 0o755));
  assert.match(
    problem ?? '',
    /^permission denied: \/csi\/csi\.sock is owned by uid 0 gid 0 with mode 0755, and this process runs as uid 1000; run the container as/,
  );
});

test('write permission for the owner, the group or others lets the user dial; root always may', () => {
  assert.equal(socketAccessProblem('/s', { uid: 1000, gids: [1000] }, socketStat(1000, 0, 0o700)), undefined);
  assert.equal(socketAccessProblem('/s', { uid: 1000, gids: [1000, 5] }, socketStat(0, 5, 0o770)), undefined);
  assert.equal(socketAccessProblem('/s', { uid: 1000, gids: [1000] }, socketStat(0, 0, 0o777)), undefined);
  assert.equal(socketAccessProblem('/s', { uid: 0, gids: [0] }, socketStat(1000, 1000, 0o700)), undefined);
  // The owner's bits decide for the owner, even when others may write.
  assert.match(socketAccessProblem('/s', { uid: 1000, gids: [1000] }, socketStat(1000, 0, 0o577)) ?? '', /permission denied/);
});

test('a missing path and a path that is not a socket are named as such', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-sock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.match(socketAccessProblem(join(dir, 'none.sock')) ?? '', /none\.sock does not exist \(yet\): is the driver running/);
  writeFileSync(join(dir, 'file'), '');
  assert.match(socketAccessProblem(join(dir, 'file')) ?? '', /file is not a unix socket$/);
});

test('a real listening socket this process may use has no problem', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-sock-'));
  const server = createServer();
  t.after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const path = join(dir, 'csi.sock');
  await new Promise<void>((resolve) => server.listen(path, resolve));
  assert.equal(socketAccessProblem(path), undefined);
});
