// --vmodule: per-file verbosity with klog's rules. Each `pattern=N` names source files by their
// base name without the extension (.ts/.js here, .go upstream); `*`, `?`, `[...]` and `\` are
// Go's filepath.Match glob syntax; the first matching pattern decides; a file that matches none
// gets only the global -v. Patterns with N=0 are dropped, as klog drops them.
import { goQuote } from '../../base/go-quote.js';

export interface VModuleEntry {
  readonly pattern: string;
  readonly level: number;
}

/**
 * Parses a --vmodule value the way component-base's flag does (messages included). An empty
 * item is skipped; `N` is an unsigned 31-bit decimal.
 */
export function parseVModule(value: string): VModuleEntry[] {
  const entries: VModuleEntry[] = [];
  for (const item of value.split(',')) {
    if (item === '') continue;
    const parts = item.split('=');
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') throw new Error(`${goQuote(item)} does not have the pattern=N format`);
    const levelText = parts[1]!;
    if (!/^[0-9]+$/.test(levelText)) {
      throw new Error(`parsing verbosity in ${goQuote(item)}: strconv.ParseUint: parsing ${goQuote(levelText)}: invalid syntax`);
    }
    const level = Number(levelText);
    if (level > 2 ** 31 - 1) {
      throw new Error(`parsing verbosity in ${goQuote(item)}: strconv.ParseUint: parsing ${goQuote(levelText)}: value out of range`);
    }
    entries.push({ pattern: parts[0]!, level });
  }
  return entries;
}

/** The name klog matches patterns against: base name without directory and extension. */
export function moduleName(file: string): string {
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  return base.replace(/\.(go|[cm]?[jt]s)$/, '');
}

/** Go's filepath.Match on a name without separators; a malformed pattern matches nothing. */
export function globMatch(pattern: string, name: string): boolean {
  const compiled = compileGlob(pattern);
  return compiled !== undefined && compiled.test(name);
}

const globCache = new Map<string, RegExp | undefined>();

function compileGlob(pattern: string): RegExp | undefined {
  if (globCache.has(pattern)) return globCache.get(pattern);
  let source = '^';
  let ok = true;
  for (let i = 0; i < pattern.length && ok; i++) {
    const c = pattern[i]!;
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '\\') {
      const next = pattern[++i];
      if (next === undefined) ok = false;
      else source += escapeRegExp(next);
    } else if (c === '[') {
      const end = classEnd(pattern, i + 1);
      if (end === -1) {
        ok = false;
        break;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('^');
      if (negated) body = body.slice(1);
      if (body === '') {
        ok = false;
        break;
      }
      let cls = '';
      for (let j = 0; j < body.length; j++) {
        let ch = body[j]!;
        if (ch === '\\') ch = body[++j] ?? '';
        if (ch === '' || ch === '-') {
          ok = false;
          break;
        }
        cls += escapeClass(ch);
        if (body[j + 1] === '-') {
          let hi = body[j + 2];
          if (hi === '\\') hi = body[j + 3];
          if (hi === undefined || hi === '') {
            ok = false;
            break;
          }
          cls += `-${escapeClass(hi)}`;
          j += body[j + 2] === '\\' ? 3 : 2;
        }
      }
      source += negated ? `[^/${cls}]` : `[${cls}]`;
      i = end;
    } else source += escapeRegExp(c);
  }
  const compiled = ok ? new RegExp(`${source}$`, 'su') : undefined;
  globCache.set(pattern, compiled);
  return compiled;
}

/** Index of the `]` closing a character class whose body starts at `from`, honouring escapes. */
function classEnd(pattern: string, from: number): number {
  for (let i = from; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return -1;
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function escapeClass(c: string): string {
  return c.replace(/[\]\\^-]/g, '\\$&');
}

/** Per-file levels from --vmodule; levels are remembered per file name. */
export class VModule {
  private readonly entries: readonly VModuleEntry[];
  private readonly byModule = new Map<string, number>();

  constructor(entries: readonly VModuleEntry[]) {
    this.entries = entries.filter((e) => e.level > 0);
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** The verbosity --vmodule gives a source file (0 when no pattern matches). */
  levelFor(file: string): number {
    const name = moduleName(file);
    let level = this.byModule.get(name);
    if (level === undefined) {
      level = 0;
      for (const entry of this.entries) {
        const literal = !/[\\*?[\]]/.test(entry.pattern);
        if (literal ? entry.pattern === name : globMatch(entry.pattern, name)) {
          level = entry.level;
          break;
        }
      }
      this.byModule.set(name, level);
    }
    return level;
  }
}
