// The source position of a log call, for klog's `file:line` header field, zap's `caller` and
// --vmodule. V8 captures one frame (stackTraceLimit 1) as a structured CallSite, without
// formatting a stack string; the compiled position is mapped back to the TypeScript file and
// line through the module's source map: the one Node keeps when source maps are on (tsx turns
// them on), else the `.js.map` file beside a compiled module (dist/), read once per file and kept
// only as flat line tables (source-map-lines.ts: a fraction of Node's parsed map), which the build
// also writes ready-made as `.js.lines`.
// Positions are cached, so a call site pays the map lookup once.
import { readFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SourceMapLines, type OriginalPosition, type SourceMapPayload } from './source-map-lines.js';

export interface CallerPosition {
  /** Directory and file, as zap's ShortCallerEncoder prints them: `resize/reconcile.ts`. */
  readonly shortFile: string;
  /** The base name, as klog prints it: `reconcile.ts`. */
  readonly file: string;
  readonly line: number;
}

const UNKNOWN: CallerPosition = { shortFile: '???', file: '???', line: 1 };

type V8CallSite = { getFileName(): string | null | undefined; getLineNumber(): number | null; getColumnNumber(): number | null };

/** The position of whoever called `below` (a function on the current stack). Never throws. */
export function callerOf(below: Function): CallerPosition {
  const savedLimit = Error.stackTraceLimit;
  const savedPrepare = Error.prepareStackTrace;
  let site: V8CallSite | undefined;
  try {
    Error.stackTraceLimit = 1;
    Error.prepareStackTrace = (_err, sites) => sites;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, below);
    site = (holder.stack as V8CallSite[] | undefined)?.[0];
  } catch {
    site = undefined;
  } finally {
    Error.prepareStackTrace = savedPrepare;
    Error.stackTraceLimit = savedLimit;
  }
  if (site === undefined) return UNKNOWN;
  try {
    return resolve(site.getFileName() ?? '', site.getLineNumber() ?? 0, site.getColumnNumber() ?? 0);
  } catch {
    return UNKNOWN;
  }
}

/** Resolved positions by file, then by compiled line and column (numbers: no key string per call). */
const positions = new Map<string, Map<number, CallerPosition>>();
let cachedPositions = 0;
/** What resolve needs of a map: Node's own SourceMap (source maps on) or our line tables. */
interface LineLookup {
  find(line: number, column: number): OriginalPosition | undefined;
}
const maps = new Map<string, LineLookup | null>();

function resolve(fileName: string, line: number, column: number): CallerPosition {
  let inFile = positions.get(fileName);
  // Unique while the column is below 2^21 (a wider line is resolved every time, never cached).
  const siteKey = column < 2_097_152 ? line * 2_097_152 + column : -1;
  const cached = siteKey < 0 ? undefined : inFile?.get(siteKey);
  if (cached !== undefined) return cached;
  let position = toPosition(fileName, line);
  const map = sourceMapFor(fileName);
  if (map !== null && line > 0) {
    const original = map.find(line - 1, Math.max(column - 1, 0));
    if (original !== undefined) position = toPosition(original.source, original.line + 1);
  }
  if (siteKey >= 0 && cachedPositions < 10_000) {
    if (inFile === undefined) positions.set(fileName, (inFile = new Map()));
    inFile.set(siteKey, position);
    cachedPositions++;
  }
  return position;
}

function toPosition(source: string, line: number): CallerPosition {
  const parts = source.split(/[\\/]/).filter((p) => p !== '');
  const file = parts.at(-1) ?? '???';
  const dir = parts.at(-2);
  return { file, shortFile: dir === undefined ? file : `${dir}/${file}`, line };
}

function sourceMapFor(fileName: string): LineLookup | null {
  let map = maps.get(fileName);
  if (map !== undefined) return map;
  map = null;
  try {
    // Node keeps maps only while source maps are on (tsx, --enable-source-maps); asking otherwise
    // loads its source-map cache modules for nothing, on the first line.
    const nodeMap = process.sourceMapsEnabled ? findSourceMap(fileName) : undefined;
    if (nodeMap !== undefined) {
      map = {
        find(line, column) {
          const entry = nodeMap.findEntry(line, column) as { originalSource?: string; originalLine?: number };
          return typeof entry.originalSource === 'string' && typeof entry.originalLine === 'number'
            ? { source: entry.originalSource, line: entry.originalLine }
            : undefined;
        },
      };
    } else if (/\.[cm]?js$/.test(fileName)) {
      const path = fileName.startsWith('file:') ? fileURLToPath(fileName) : fileName;
      // The build writes the decoded tables beside the map (scripts/gen-log-lines.ts); the map
      // itself is the fallback.
      try {
        map = SourceMapLines.deserialize(readFileSync(`${path}.lines`));
      } catch {
        map = SourceMapLines.parse(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as SourceMapPayload);
      }
    }
  } catch {
    map = null;
  }
  maps.set(fileName, map);
  return map;
}
