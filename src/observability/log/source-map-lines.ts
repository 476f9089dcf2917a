// A source map's `mappings` decoded into flat typed arrays, for the one lookup the logger needs:
// generated position → original file and line. Node's SourceMap keeps an array object per mapping
// segment, which for the bundle's map (most segments in bundled dependencies) is several times the
// heap of these tables, held for the life of the process (docs/performance.md, "Start-up costs
// behind code choices").

export interface OriginalPosition {
  readonly source: string;
  /** 0-based, as in the source map. */
  readonly line: number;
}

/** The source map fields this reads (version 3). */
export interface SourceMapPayload {
  readonly sources: readonly (string | null)[];
  readonly mappings: string;
  readonly sourceRoot?: string;
}

/** "SML1": the header of SourceMapLines.serialize's format. */
const MAGIC = 0x314c4d53;

const BASE64 = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;

export class SourceMapLines {
  private constructor(
    private readonly sources: readonly string[],
    /** Segments of generated line L are [lineStart[L], lineStart[L + 1]). */
    private readonly lineStart: Uint32Array,
    private readonly column: Uint32Array,
    /** -1 for a segment that maps to no source. */
    private readonly source: Int32Array,
    private readonly originalLine: Uint32Array,
  ) {}

  /** Throws on a malformed `mappings` string. */
  static parse(map: SourceMapPayload): SourceMapLines {
    const { mappings } = map;
    let lines = 1;
    let bound = 1;
    for (let i = 0; i < mappings.length; i++) {
      const c = mappings.charCodeAt(i);
      if (c === 59 /* ; */) lines++;
      if (c === 59 || c === 44 /* , */) bound++;
    }
    const lineStart = new Uint32Array(lines + 1);
    const column = new Uint32Array(bound);
    const source = new Int32Array(bound);
    const originalLine = new Uint32Array(bound);
    const fields = [0, 0, 0, 0, 0];
    let count = 0;
    let line = 0;
    let genColumn = 0;
    let src = 0;
    let origLine = 0;
    let i = 0;
    while (i < mappings.length) {
      const c = mappings.charCodeAt(i);
      if (c === 59) {
        lineStart[++line] = count;
        genColumn = 0;
        i++;
        continue;
      }
      if (c === 44) {
        i++;
        continue;
      }
      // One segment: 1, 4 or 5 VLQ fields, up to the next ',' or ';'.
      let n = 0;
      while (i < mappings.length && mappings.charCodeAt(i) !== 44 && mappings.charCodeAt(i) !== 59) {
        let value = 0;
        let shift = 0;
        let digit: number;
        do {
          const code = mappings.charCodeAt(i++);
          digit = code < 128 ? BASE64[code]! : -1;
          if (digit < 0 || shift > 30) throw new Error(`malformed source map mappings at ${i - 1}`);
          value += (digit & 31) * 2 ** shift;
          shift += 5;
        } while (digit & 32);
        if (n < 5) fields[n] = value % 2 === 1 ? -(value - 1) / 2 : value / 2;
        n++;
      }
      genColumn += fields[0]!;
      column[count] = genColumn;
      if (n >= 4) {
        src += fields[1]!;
        origLine += fields[2]!;
        source[count] = src;
        originalLine[count] = origLine;
      } else {
        source[count] = -1;
      }
      count++;
    }
    lineStart.fill(count, line + 1);
    const root = map.sourceRoot ? `${map.sourceRoot.replace(/\/$/, '')}/` : '';
    const sources = map.sources.map((s) => (s === null ? '' : root + s));
    return new SourceMapLines(sources, lineStart, column, source, originalLine);
  }

  /**
   * The same lookups for the sources `keep` accepts; positions in any other source find nothing
   * (as a segment without a source), and runs of such segments on a line become one, as do runs
   * that map to the same file and line (a lookup only asks for the line: the first of the run
   * answers for the rest). The logger only asks about our own files, so the bundled
   * dependencies' segments can go.
   */
  only(keep: (source: string) => boolean): SourceMapLines {
    const kept = this.sources.map(keep);
    const n = this.column.length;
    const lineStart = new Uint32Array(this.lineStart.length);
    const column = new Uint32Array(n);
    const source = new Int32Array(n);
    const originalLine = new Uint32Array(n);
    let count = 0;
    for (let line = 0; line + 1 < this.lineStart.length; line++) {
      lineStart[line] = count;
      for (let i = this.lineStart[line]!; i < this.lineStart[line + 1]!; i++) {
        const src = this.source[i]!;
        const none = src < 0 || !kept[src];
        // A segment that maps where the one before it on this line maps adds nothing (the
        // logger's table is read at the first log line of every start: smaller is cheaper).
        if (count > lineStart[line]!) {
          if (none && source[count - 1] === -1) continue;
          if (!none && source[count - 1] === src && originalLine[count - 1] === this.originalLine[i]) continue;
        }
        column[count] = this.column[i]!;
        source[count] = none ? -1 : src;
        originalLine[count] = none ? 0 : this.originalLine[i]!;
        count++;
      }
    }
    lineStart[this.lineStart.length - 1] = count;
    return new SourceMapLines(this.sources, lineStart, column.slice(0, count), source.slice(0, count), originalLine.slice(0, count));
  }

  /**
   * The tables as one buffer (written beside the bundle at build time, so start-up maps the file
   * instead of decoding the map): a 16-byte header (magic, line count + 1, segment count, bytes of
   * the sources' JSON), the four tables as little-endian 32-bit integers, then the sources' JSON.
   */
  serialize(): Buffer {
    const lines = this.lineStart.length;
    const segments = this.column.length;
    const sources = Buffer.from(JSON.stringify(this.sources), 'utf8');
    const out = Buffer.alloc(16 + 4 * (lines + 3 * segments) + sources.length);
    out.writeUInt32LE(MAGIC, 0);
    out.writeUInt32LE(lines, 4);
    out.writeUInt32LE(segments, 8);
    out.writeUInt32LE(sources.length, 12);
    let at = 16;
    for (const table of [this.lineStart, this.column, this.source, this.originalLine]) {
      Buffer.from(table.buffer, table.byteOffset, table.byteLength).copy(out, at);
      at += table.byteLength;
    }
    sources.copy(out, at);
    return out;
  }

  /** Reads serialize's format; throws when the buffer is not one. */
  static deserialize(buf: Uint8Array): SourceMapLines {
    // The typed arrays view the buffer directly, which needs 4-byte alignment (a pooled Buffer may not have it).
    const bytes = buf.byteOffset % 4 === 0 ? buf : Uint8Array.prototype.slice.call(buf);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength < 16 || view.getUint32(0, true) !== MAGIC) throw new Error('not a source map line table');
    if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('source map line tables are little-endian; this host is not');
    const lines = view.getUint32(4, true);
    const segments = view.getUint32(8, true);
    const sourcesLength = view.getUint32(12, true);
    if (16 + 4 * (lines + 3 * segments) + sourcesLength !== bytes.byteLength) throw new Error('truncated source map line table');
    let at = bytes.byteOffset + 16;
    const take = <A>(make: (b: ArrayBufferLike, o: number, n: number) => A, n: number): A => {
      const table = make(bytes.buffer, at, n);
      at += 4 * n;
      return table;
    };
    const lineStart = take((b, o, n) => new Uint32Array(b, o, n), lines);
    const column = take((b, o, n) => new Uint32Array(b, o, n), segments);
    const source = take((b, o, n) => new Int32Array(b, o, n), segments);
    const originalLine = take((b, o, n) => new Uint32Array(b, o, n), segments);
    const sources = JSON.parse(Buffer.from(bytes.buffer, at, sourcesLength).toString('utf8')) as string[];
    return new SourceMapLines(sources, lineStart, column, source, originalLine);
  }

  /**
   * The original position of the last segment at or before (line, column), both 0-based, as
   * node:module's SourceMap.findEntry picks it; undefined when that segment has no source.
   */
  find(line: number, column: number): OriginalPosition | undefined {
    if (line < 0) return undefined;
    const last = Math.min(line, this.lineStart.length - 2);
    let lo = this.lineStart[last]!;
    let hi = this.lineStart[last + 1]!;
    let found = lo - 1;
    if (last === line) {
      // Last segment of this line whose column <= column.
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.column[mid]! <= column) {
          found = mid;
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
    } else {
      found = hi - 1;
    }
    if (found < 0) return undefined;
    const src = this.source[found]!;
    if (src < 0 || src >= this.sources.length) return undefined;
    return { source: this.sources[src]!, line: this.originalLine[found]! };
  }
}
