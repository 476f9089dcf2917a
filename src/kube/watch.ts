// Decoding a watch response: one JSON WatchEvent per line. Kept apart from the informer so the
// informer only sees parsed events and the HTTP layer only sees bytes.
import type http from 'node:http';
import type { KubeObject } from '../model/objects.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** For ERROR events a Status object ({code, reason, message}). */
  object: KubeObject;
}

/** Yields events until the server ends the stream; destroying the response ends it early. */
export async function* decodeWatchStream(res: http.IncomingMessage): AsyncGenerator<WatchEvent> {
  let buffered = '';
  res.setEncoding('utf8');
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== '') yield parseEvent(line);
      }
    }
    const rest = buffered.trim();
    if (rest !== '') yield parseEvent(rest);
  } finally {
    res.destroy();
  }
}

function parseEvent(line: string): WatchEvent {
  const event = JSON.parse(line) as Partial<WatchEvent>;
  if (typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
    throw new Error(`malformed watch event: ${line.slice(0, 80)}`);
  }
  return event as WatchEvent;
}
