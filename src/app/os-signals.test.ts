import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { dieOnSignals, EXIT_CODE_SIGNAL_IGNORED, handleShutdownSignals } from './os-signals.js';

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
