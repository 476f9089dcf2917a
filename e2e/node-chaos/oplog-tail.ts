// The loopfs driver's operation log read as it grows (e2e/loopfs-oplog.ts reads it whole): the
// node chaos runs strike their faults when a call of a given kind has begun, so they poll the log
// every 100 ms and parse only the bytes appended since; a line still being written waits for the
// next poll.
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { LoopfsOperation } from '../loopfs-oplog.js';

export class OpLogTail {
  private readonly path: string;
  private offset = 0;
  private partial = '';
  readonly records: LoopfsOperation[] = [];

  constructor(dataDir: string) {
    this.path = join(dataDir, 'operations.jsonl');
  }

  /** Reads what was appended since the last call; returns the new records. */
  poll(): LoopfsOperation[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const chunks: Buffer[] = [];
    try {
      const buf = Buffer.alloc(1 << 20);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n === 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
        this.offset += n;
      }
    } finally {
      closeSync(fd);
    }
    const text = this.partial + Buffer.concat(chunks).toString('utf8');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    const fresh = lines.filter((l) => l !== '').map((l) => JSON.parse(l) as LoopfsOperation);
    this.records.push(...fresh);
    return fresh;
  }

  /** Polls every 100 ms until a record satisfies the predicate (resolves with it) or the deadline passes (rejects). */
  async waitFor(what: string, predicate: (r: LoopfsOperation) => boolean, timeoutMs: number): Promise<LoopfsOperation> {
    const seen = this.records.find(predicate);
    if (seen) return seen;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.poll().find(predicate);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`the driver's operation log showed no ${what} within ${timeoutMs / 1000} s (${this.records.length} records)`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Calls begun and not ended so far, by operation (what a fault strikes in the middle of). */
  inFlight(): Record<string, number> {
    this.poll();
    const ended = new Set(this.records.filter((r) => r.phase === 'end').map((r) => r.opId));
    const out: Record<string, number> = {};
    for (const r of this.records) if (r.phase === 'start' && !ended.has(r.opId)) out[r.op] = (out[r.op] ?? 0) + 1;
    return out;
  }
}
