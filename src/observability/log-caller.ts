// The source position of a log call, for klog's `file:line` header field, zap's `caller` and
// --vmodule. V8 captures one frame (stackTraceLimit 1) as a structured CallSite, without
// formatting a stack string; the compiled position is mapped back to the TypeScript file and
// line through the module's source map: the one Node keeps when source maps are on (tsx turns
// them on), else the `.js.map` file beside a compiled module (dist/), read once per file.
// Positions are cached, so a call site pays the map lookup once.
import { readFileSync } from 'node:fs';
import { findSourceMap, SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

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

const positions = new Map<string, CallerPosition>();
const maps = new Map<string, SourceMap | null>();

function resolve(fileName: string, line: number, column: number): CallerPosition {
  const cacheKey = `${fileName}:${line}:${column}`;
  const cached = positions.get(cacheKey);
  if (cached !== undefined) return cached;
  let position = toPosition(fileName, line);
  const map = sourceMapFor(fileName);
  if (map !== null && line > 0) {
    const entry = map.findEntry(line - 1, Math.max(column - 1, 0)) as { originalSource?: string; originalLine?: number };
    if (typeof entry.originalSource === 'string' && typeof entry.originalLine === 'number') {
      position = toPosition(entry.originalSource, entry.originalLine + 1);
    }
  }
  if (positions.size < 10_000) positions.set(cacheKey, position);
  return position;
}

function toPosition(source: string, line: number): CallerPosition {
  const parts = source.split(/[\\/]/).filter((p) => p !== '');
  const file = parts.at(-1) ?? '???';
  const dir = parts.at(-2);
  return { file, shortFile: dir === undefined ? file : `${dir}/${file}`, line };
}

function sourceMapFor(fileName: string): SourceMap | null {
  let map = maps.get(fileName);
  if (map !== undefined) return map;
  map = null;
  try {
    map = findSourceMap(fileName) ?? null;
    if (map === null && /\.[cm]?js$/.test(fileName)) {
      const path = fileName.startsWith('file:') ? fileURLToPath(fileName) : fileName;
      const payload: unknown = JSON.parse(readFileSync(`${path}.map`, 'utf8'));
      map = new SourceMap(payload as ConstructorParameters<typeof SourceMap>[0]);
    }
  } catch {
    map = null;
  }
  maps.set(fileName, map);
  return map;
}
