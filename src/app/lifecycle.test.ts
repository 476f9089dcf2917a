import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { dieOnSignals, eitherSignal, EXIT_CODE_SIGNAL_IGNORED, handleShutdownSignals, leaderIdentity, Lifecycle, settleWithin } from './lifecycle.js';

test('lifecycle: running → draining aborts only the work signal; finish aborts the root signal', async () => {
  const l = new Lifecycle();
  assert.equal(l.state, 'running');
  const begun = l.whenShutdownBegins();
  l.beginShutdown('SIGTERM');
  await begun;
  assert.equal(l.state, 'draining');
  assert.equal(l.workSignal.aborted, true);
  assert.equal(l.rootSignal.aborted, false);
  l.beginShutdown('again'); // no-op
  l.finish();
  l.finish();
  assert.equal(l.state, 'stopped');
  assert.equal(l.rootSignal.aborted, true);
});

test('signals: the first calls onShutdown, the second forces an exit', () => {
  const proc = new EventEmitter() as EventEmitter & { exit(code: number): never };
  const exits: number[] = [];
  proc.exit = ((code: number) => {
    exits.push(code);
  }) as never;
  const seen: string[] = [];
  const dispose = handleShutdownSignals({ onShutdown: (s) => seen.push(s), proc: proc as never });
  proc.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(seen, ['SIGTERM']);
  assert.deepEqual(exits, []);
  proc.emit('SIGINT', 'SIGINT');
  assert.deepEqual(exits, [1]);
  dispose();
  assert.equal(proc.listenerCount('SIGTERM'), 0);
});

test('without the gate a signal re-raises itself with no listener left, then exits 2 if still alive (PID 1)', () => {
  const proc = new EventEmitter() as EventEmitter & { pid: number; kill(pid: number, s: string): boolean; exit(code: number): never };
  const calls: string[] = [];
  proc.pid = 4242;
  proc.kill = (pid: number, s: string) => {
    calls.push(`kill ${pid} ${s} listeners=${proc.listenerCount('SIGTERM') + proc.listenerCount('SIGINT')}`);
    return true;
  };
  proc.exit = ((code: number) => {
    calls.push(`exit ${code}`);
  }) as never;
  dieOnSignals({ proc: proc as never });
  assert.equal(proc.listenerCount('SIGTERM'), 1);
  assert.equal(proc.listenerCount('SIGINT'), 1);
  proc.emit('SIGINT', 'SIGINT');
  assert.deepEqual(calls, ['kill 4242 SIGINT listeners=0', `exit ${EXIT_CODE_SIGNAL_IGNORED}`]);
  assert.equal(EXIT_CODE_SIGNAL_IGNORED, 2);
});

test('settleWithin: settled work, failed work, and work that outlives the bound', async () => {
  assert.equal(await settleWithin(Promise.resolve(), 1000), 'settled');
  assert.equal(await settleWithin(Promise.reject(new Error('x')), 1000), 'settled');
  assert.equal(await settleWithin(new Promise(() => {}), 10), 'timedOut');
});

test('identity: the sanitized hostname, or the override', () => {
  assert.equal(
    leaderIdentity({}, () => 'node-1.example.com'),
    'node-1-example-com',
  );
  assert.equal(
    leaderIdentity({}, () => 'pod_'),
    'pod-X',
  );
  assert.equal(
    leaderIdentity({ CSI_RESIZER_LEADER_ELECTION_IDENTITY: 'replica.b' }, () => 'host'),
    'replica-b',
  );
});

test('eitherSignal aborts with whichever parent aborts first and unlinks on dispose', () => {
  const a = new AbortController();
  const b = new AbortController();
  const either = eitherSignal(a.signal, b.signal);
  b.abort(new Error('b'));
  assert.equal(either.signal.aborted, true);
  assert.equal((either.signal.reason as Error).message, 'b');
  either.dispose();
  const pre = new AbortController();
  pre.abort(new Error('pre'));
  assert.equal(eitherSignal(pre.signal, new AbortController().signal).signal.aborted, true);
});
