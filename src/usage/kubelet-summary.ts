// Reading the volume usage out of kubelet's summary API answer (`GET /stats/summary`,
// stats/v1alpha1 Summary): every pod's `volume` entries that name a claim (`pvcRef`), with the
// filesystem's capacity, available bytes, inodes, free inodes and the `time` kubelet read them at.
// Only the claims asked for are kept; a claim several pods on the node mount appears once per pod,
// and the newest entry wins. An entry without capacity or available bytes (kubelet leaves them out
// until its first reading) is not a sample.
//
// The answer is read as it arrives: a summary is mostly containers, cpu, memory, io and network
// figures of every pod, and auto-grow needs only the `volume` lists. Parsing whole summaries put
// each node's whole answer and its object tree on the heap at every poll, which stayed resident
// until the next full collection (docs/performance.md, "Auto-grow"). So a scanner
// follows the document's structure (strings, nesting, the keys of the root and of each pod) and
// hands each pod's `volume` list to JSON.parse; the rest is checked for balance only. It scans the
// bytes as they came, not a string decoded from them: every character it acts on is ASCII, and no
// byte of a UTF-8 multi-byte character is below 0x80, so no such byte is taken for one; only the
// keys it names and the `volume` lists are decoded. Pure: the transport is http-get.ts.
import type { VolumeUsage } from './volume-usage.js';

export class SummaryFormatError extends Error {
  constructor(message: string) {
    super(`kubelet summary: ${message}`);
    this.name = 'SummaryFormatError';
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A uint64 as JSON carries it: a non-negative whole number (exact up to 2^53, as JSON.parse reads it). */
function count(v: unknown): bigint | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? BigInt(Math.trunc(v)) : undefined;
}

const OBJECT = 0x7b; // {
const OBJECT_END = 0x7d; // }
const ARRAY = 0x5b; // [
const ARRAY_END = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The characters that change the reader's state outside strings; the rest (numbers, literals, space) are passed over. */
const STRUCTURAL = new Uint8Array(256);
for (const c of '"{}[]:,') STRUCTURAL[c.charCodeAt(0)] = 1;

/** The depths the reader names: the root object, the `pods` list, a pod, a pod's `volume` list. */
const ROOT = 1;
const POD = 3;

/**
 * Reads one summary from its text, piece by piece (`write`), and returns the usage of the wanted
 * claims (`namespace/name`) at `end`. Throws SummaryFormatError when the text is not a summary: not
 * a JSON object, `pods` not a list, a `volume` list that is not JSON, unbalanced, or cut short.
 */
export class SummaryReader {
  private readonly found = new Map<string, VolumeUsage>();
  /** The open containers, innermost last: OBJECT or ARRAY. */
  private readonly open: number[] = [];
  private started = false;
  private closed = false;
  /** In an object, before its next key. */
  private expectKey = false;
  private inString = false;
  /** The string's next character is escaped (its backslash ended the previous piece). */
  private escaped = false;
  /** The string being read is a key the reader names (at ROOT, or at POD inside `pods`); its raw bytes so far, one character per byte. */
  private key: string | undefined;
  private rootKey = '';
  private podKey = '';
  /** Inside the root's `pods` list. */
  private inPods = false;
  /** The next value is the root's `pods`: a list or null. */
  private podsValueNext = false;
  /** The bytes of the `volume` list being read (copies: a piece is not kept past its write), and where it starts in the current piece (-1: not in it). */
  private volumeList: Buffer[] | undefined;
  private listFrom = -1;

  constructor(private readonly wanted: ReadonlySet<string>) {}

  write(piece: Buffer): void {
    let i = 0;
    this.listFrom = this.volumeList ? 0 : -1;
    const n = piece.length;
    while (i < n) {
      if (this.inString) {
        const end = this.stringEnd(piece, i);
        if (this.key !== undefined) this.key += piece.toString('latin1', i, end < 0 ? n : end);
        if (end < 0) break;
        this.inString = false;
        if (this.key !== undefined) this.keyRead(this.key);
        i = end + 1;
        continue;
      }
      // Between structural characters, once the document is open and no value is being checked.
      if (this.started && !this.closed && !this.podsValueNext) {
        while (i < n) {
          if (STRUCTURAL[piece[i]!] === 1) break;
          i++;
        }
        if (i === n) break;
      }
      const c = piece[i]!;
      if (!isSpace(c)) this.character(c, piece, i);
      i++;
    }
    if (this.volumeList !== undefined && this.listFrom >= 0) this.volumeList.push(Buffer.from(piece.subarray(this.listFrom)));
  }

  end(): Map<string, VolumeUsage> {
    if (!this.started) throw new SummaryFormatError('the answer is not a JSON object');
    if (!this.closed) throw new SummaryFormatError('the answer ends before the document does');
    return this.found;
  }

  /** One character outside strings, not space, at `i` of `piece`. */
  private character(c: number, piece: Buffer, i: number): void {
    if (this.closed) throw new SummaryFormatError('the answer goes on after the document');
    if (!this.started) {
      if (c !== OBJECT) throw new SummaryFormatError('the answer is not a JSON object');
      this.started = true;
    }
    if (this.podsValueNext) {
      this.podsValueNext = false;
      if (c !== ARRAY && c !== 0x6e /* null */) throw new SummaryFormatError('"pods" is not a list');
      if (c === ARRAY) this.inPods = true;
    }
    switch (c) {
      case QUOTE:
        this.inString = true;
        this.escaped = false;
        this.key = this.expectKey && this.namesKeys() ? '' : undefined;
        return;
      case OBJECT:
        this.open.push(OBJECT);
        this.expectKey = true;
        return;
      case ARRAY:
        if (this.open.length === POD && this.inPods && this.podKey === 'volume' && this.volumeList === undefined) {
          this.volumeList = [];
          this.listFrom = i;
        }
        this.open.push(ARRAY);
        this.expectKey = false;
        return;
      case OBJECT_END:
      case ARRAY_END:
        this.close(c, piece, i);
        return;
      case COLON:
        this.expectKey = false;
        this.podsValueNext = this.open.length === ROOT && this.rootKey === 'pods';
        return;
      case COMMA:
        this.expectKey = this.open[this.open.length - 1] === OBJECT;
        return;
      default:
        return;
    }
  }

  /** The end of an object or a list; a pod's `volume` list is read once whole. */
  private close(c: number, piece: Buffer, i: number): void {
    if (this.open.pop() !== (c === OBJECT_END ? OBJECT : ARRAY)) throw new SummaryFormatError('the answer is not balanced JSON');
    this.expectKey = false;
    if (this.open.length === POD && this.volumeList !== undefined && c === ARRAY_END) {
      this.volumeList.push(piece.subarray(this.listFrom, i + 1));
      this.volumes(Buffer.concat(this.volumeList).toString('utf8'));
      this.volumeList = undefined;
      this.listFrom = -1;
    }
    if (this.open.length === ROOT) this.inPods = false;
    if (this.open.length === 0) this.closed = true;
  }

  /** Whether a key at this place is one the reader follows. */
  private namesKeys(): boolean {
    return this.open.length === ROOT || (this.open.length === POD && this.inPods);
  }

  private keyRead(bytes: string): void {
    // Kubelet's keys are ASCII without escapes; any other is decoded as JSON decodes it.
    const raw = /[^\x00-\x7f]/.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes;
    const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
    if (this.open.length === ROOT) this.rootKey = key;
    else this.podKey = key;
    this.key = undefined;
  }

  /**
   * The index of the quote that closes the string, from `from` on; -1 when it goes on in the next
   * piece. A loop over the bytes, not Buffer#indexOf: most strings are a few bytes long, and a call
   * into the runtime per string costs more than reading them.
   */
  private stringEnd(piece: Buffer, from: number): number {
    const n = piece.length;
    let i = from;
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    while (i < n) {
      const c = piece[i]!;
      if (c === QUOTE) return i;
      if (c === BACKSLASH) {
        // The escaped byte may be the next piece's first.
        if (i + 1 === n) {
          this.escaped = true;
          return -1;
        }
        i += 2;
        continue;
      }
      i++;
    }
    return -1;
  }

  /** One pod's `volume` list: each entry that names a wanted claim and carries a measurement. */
  private volumes(text: string): void {
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch {
      throw new SummaryFormatError('a pod\'s "volume" list is not JSON');
    }
    if (!Array.isArray(list)) return;
    for (const volume of list) {
      if (!isObject(volume) || !isObject(volume['pvcRef'])) continue;
      const ref = volume['pvcRef'];
      const key = `${String(ref['namespace'] ?? '')}/${String(ref['name'] ?? '')}`;
      if (!this.wanted.has(key)) continue;
      const usage = volumeUsage(volume);
      if (usage === undefined) continue;
      const known = this.found.get(key);
      if (known === undefined || usage.sampledAtMs > known.sampledAtMs) this.found.set(key, usage);
    }
  }
}

/** The usage of each wanted claim (`namespace/name`) a whole summary reports (its text, or its UTF-8 bytes). */
export function usageFromSummary(summary: string | Buffer, wanted: ReadonlySet<string>): Map<string, VolumeUsage> {
  const reader = new SummaryReader(wanted);
  reader.write(typeof summary === 'string' ? Buffer.from(summary, 'utf8') : summary);
  return reader.end();
}

function volumeUsage(volume: Json): VolumeUsage | undefined {
  const capacityBytes = count(volume['capacityBytes']);
  const availableBytes = count(volume['availableBytes']);
  const sampledAtMs = typeof volume['time'] === 'string' ? Date.parse(volume['time']) : Number.NaN;
  if (capacityBytes === undefined || availableBytes === undefined || Number.isNaN(sampledAtMs)) return undefined;
  const inodes = count(volume['inodes']);
  const inodesFree = count(volume['inodesFree']);
  return {
    capacityBytes,
    availableBytes,
    ...(inodes !== undefined && inodesFree !== undefined ? { inodes, inodesFree } : {}),
    sampledAtMs,
  };
}
