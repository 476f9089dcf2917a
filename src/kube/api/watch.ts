// Decoding a watch response: one JSON WatchEvent per line. Kept apart from the informer so the
// informer only sees parsed events and the HTTP layer only sees bytes.
import type { KubeObject } from '../../model/objects.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** For ERROR events a Status object ({code, reason, message}). */
  object: KubeObject;
}

/** A watch response's body bytes as they arrive (KubeHttp.stream's ResponseStream, a Readable in tests). */
export interface WatchBytes extends AsyncIterable<Buffer> {
  /** Stops reading; the connection is closed unless the body already ended. */
  destroy(): void;
}

const NEWLINE = 0x0a;

/**
 * Yields events until the server ends the stream; destroying the response ends it early. Lines
 * are cut on the raw bytes (a newline byte never occurs inside a UTF-8 sequence), so each event
 * is decoded once, straight from the chunk that holds it, with no stream decoder or growing
 * string in between.
 */
export async function* decodeWatchStream(res: WatchBytes): AsyncGenerator<WatchEvent> {
  /** The start of a line that continues in the next chunk(s). */
  let partial: Buffer[] = [];
  try {
    for await (const chunk of res) {
      let start = 0;
      let newline: number;
      while ((newline = chunk.indexOf(NEWLINE, start)) >= 0) {
        let line: string;
        if (partial.length === 0) {
          line = chunk.toString('utf8', start, newline);
        } else {
          partial.push(chunk.subarray(start, newline));
          line = Buffer.concat(partial).toString('utf8');
          partial = [];
        }
        start = newline + 1;
        const event = parseLine(line);
        if (event !== undefined) yield event;
      }
      if (start < chunk.length) partial.push(chunk.subarray(start));
    }
    if (partial.length > 0) {
      const event = parseLine(Buffer.concat(partial).toString('utf8'));
      if (event !== undefined) yield event;
    }
  } finally {
    res.destroy();
  }
}

/** One line's event; undefined for a blank line. */
function parseLine(line: string): WatchEvent | undefined {
  // An event line starts with `{` (JSON.parse allows the `\r` or spaces a line may end with);
  // anything else may be padded with other whitespace, or be blank.
  if (line.charCodeAt(0) === 0x7b) {
    try {
      return parseEvent(line);
    } catch {
      // e.g. trailing whitespace JSON does not allow: judged on the trimmed line below
    }
  }
  const trimmed = line.trim();
  return trimmed === '' ? undefined : parseEvent(trimmed);
}

function parseEvent(line: string): WatchEvent {
  const event = JSON.parse(line) as Partial<WatchEvent>;
  if (typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
    throw new Error(`malformed watch event: ${line.slice(0, 80)}`);
  }
  return event as WatchEvent;
}
