// Where log lines go, with component-base's stream options:
//   default      every line to stderr (klog and the JSON format both write one stream there);
//   split stream info lines to stdout, warnings and errors to stderr (--log-*-split-stream);
//   info buffer  with a split stream, info lines may wait in a buffer of N bytes
//                (--log-*-info-buffer-size): a line that doesn't fit flushes the buffer first, a
//                line larger than the buffer is written directly. The buffer is flushed every
//                --log-flush-frequency and when the process exits.
// The flush period may be any Go duration: a chain of setLongTimeout timers, since setInterval's
// period cannot exceed 2^31-1 ms.
// process.stdout/stderr writes are synchronous for files and pipes on Linux, so an exit never
// loses a line that was not buffered.

import type { TimerHandle } from '../../base/clock.js';
import { setLongTimeout } from '../../base/long-timer.js';

export interface LogOutput {
  /** One line without its newline. `isInfo` picks the stream when the output is split. */
  write(line: string, isInfo: boolean): void;
  flush(): void;
  close(): void;
}

export interface LogOutputOptions {
  splitStream: boolean;
  /** Bytes of info lines to hold back (0: no buffering); only with splitStream; capped at 2 GiB as upstream does. */
  infoBufferBytes: number;
  flushIntervalMs: number;
  /** The streams, for tests: process.stdout and process.stderr by default. */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

const MAX_BUFFER_BYTES = 2 * 1024 * 1024 * 1024;

function guarded(write: (text: string) => void): (text: string) => void {
  return (text) => {
    try {
      write(text);
    } catch {
      // A closed stream must not take the process down with it; the line is lost.
    }
  };
}

export function createLogOutput(options: LogOutputOptions): LogOutput {
  const toStdout = guarded(options.stdout ?? ((text) => process.stdout.write(text)));
  const toStderr = guarded(options.stderr ?? ((text) => process.stderr.write(text)));
  if (!options.splitStream) {
    return { write: (line) => toStderr(`${line}\n`), flush: () => {}, close: () => {} };
  }
  const capacity = Math.min(Math.max(Math.floor(options.infoBufferBytes), 0), MAX_BUFFER_BYTES);
  if (capacity === 0) {
    return { write: (line, isInfo) => (isInfo ? toStdout : toStderr)(`${line}\n`), flush: () => {}, close: () => {} };
  }
  let pending: string[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    pendingBytes = 0;
    toStdout(text);
  };
  const periodMs = Math.max(options.flushIntervalMs, 1);
  let timer: TimerHandle;
  const flushEveryPeriod = () => {
    timer = setLongTimeout(() => {
      flush();
      flushEveryPeriod();
    }, periodMs);
  };
  flushEveryPeriod();
  const onExit = () => flush();
  process.on('exit', onExit);
  return {
    write(line, isInfo) {
      const text = `${line}\n`;
      if (!isInfo) {
        toStderr(text);
        return;
      }
      const bytes = Buffer.byteLength(text);
      if (bytes > capacity - pendingBytes && pendingBytes > 0) flush();
      if (bytes > capacity) {
        toStdout(text);
        return;
      }
      pending.push(text);
      pendingBytes += bytes;
    },
    flush,
    close() {
      flush();
      timer.cancel();
      process.off('exit', onExit);
    },
  };
}
