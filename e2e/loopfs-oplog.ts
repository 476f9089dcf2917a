// The loopfs test driver's operation log, read by tests on the node's host: one JSON object per
// line, a "start" and an "end" line per call that changes something (docs/e2e.md, "The loopfs
// test driver"). An end line with result "grown" is one growth applied, of the file
// (ControllerExpandVolume), the filesystem (NodeExpandVolume, or NodeStageVolume for an ext4
// grown unmounted) or a block volume's device, with that layer's bytes before and after.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type LoopfsLayer = 'file' | 'filesystem' | 'device';

export interface LoopfsOperation {
  time: string;
  op: string;
  phase: 'start' | 'end';
  opId: string;
  pid: number;
  /** The driver process's host name: in a pod, the pod's name (pids repeat across containers). */
  host?: string;
  volume: string;
  requiredBytes?: number;
  layer?: LoopfsLayer;
  sizeBefore?: number;
  sizeAfter?: number;
  online?: boolean;
  result?: 'grown' | 'unchanged' | 'ok' | 'error';
  code?: string;
  error?: string;
}

/** Every record of the log in the driver's data directory (E2E_LOOPFS_DIR); none before the first call. */
export function readLoopfsLog(dataDir: string): LoopfsOperation[] {
  let text: string;
  try {
    text = readFileSync(join(dataDir, 'operations.jsonl'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as LoopfsOperation;
      } catch (err) {
        throw new Error(`operations.jsonl line ${i + 1} is not JSON: ${line}`, { cause: err });
      }
    });
}

/** The growths applied to one volume's layer, in order. */
export function growths(log: LoopfsOperation[], volume: string, layer: LoopfsLayer): LoopfsOperation[] {
  return log.filter((r) => r.phase === 'end' && r.volume === volume && r.layer === layer && r.result === 'grown');
}

/** The end records of one operation on one volume. */
export function ended(log: LoopfsOperation[], volume: string, op: string): LoopfsOperation[] {
  return log.filter((r) => r.phase === 'end' && r.volume === volume && r.op === op);
}
