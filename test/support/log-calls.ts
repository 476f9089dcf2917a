// Finds the log calls in our sources (for the table test that pins them to upstream's lines):
// receiver `…log`, optional `.v(N)` (a chain the formatter broke over lines too), the method, the message (a literal, or the expression's
// text) and the top-level keys of the fields object literal.

export interface LogCall {
  readonly file: string;
  readonly line: number;
  /** `startupError` for `new StartupError(message, exitCode, { cause })`, which main logs. */
  readonly method: 'info' | 'infof' | 'warn' | 'warnf' | 'error' | 'errorf' | 'fatalf' | 'startupError';
  readonly level: number;
  readonly message: string;
  readonly keys: readonly string[];
}

const CALL =
  /\b(?:log|this\.log|[\w.]+\.log)(?:\s*\.contextual\(\))?(?:\s*\.v\((\d+)\))?\s*\.(info|infof|warn|warnf|error|errorf|fatalf)\(|\bnew (StartupError)\(/g;

/** The index just past the bracket that closes the one opened before `from`. */
function skipBalanced(text: string, from: number, open: string, close: string): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      i = skipString(text, i);
      continue;
    }
    if (c === open) depth++;
    else if (c === close && --depth === 0) return i + 1;
  }
  return text.length;
}

function skipString(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
    else if (quote === '`' && text[i] === '$' && text[i + 1] === '{') i = skipBalanced(text, i + 2, '{', '}') - 1;
  }
  return text.length;
}

/** Splits at top-level commas. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') i = skipString(text, i);
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function literal(text: string): string | undefined {
  const m = /^(['"])((?:\\.|(?!\1).)*)\1$/s.exec(text);
  if (!m) return undefined;
  return m[2]!.replace(/\\(.)/g, '$1');
}

export function findLogCalls(file: string, source: string): LogCall[] {
  const calls: LogCall[] = [];
  for (const match of source.matchAll(CALL)) {
    const argsStart = match.index + match[0].length;
    const argsEnd = skipBalanced(source, argsStart, '(', ')') - 1;
    const args = splitTopLevel(source.slice(argsStart, argsEnd));
    const messageText = args[0] ?? '';
    const startup = match[3] === 'StartupError';
    let keys: string[] = [];
    const fields = startup ? args[2] : args[1];
    if (fields?.startsWith('{')) {
      keys = splitTopLevel(fields.slice(1, -1)).map((entry) => {
        const key = /^(?:(['"])(.*?)\1|([\w$]+))\s*(?::|$)/s.exec(entry);
        return key ? (key[2] ?? key[3] ?? entry) : entry;
      });
    } else if (fields !== undefined) {
      keys = [`<${fields}>`];
    }
    if (startup) keys = keys.filter((k) => k === 'cause');
    // `cond ? 'a' : 'b'` and `x ?? 'a'` stand for each literal message they can give.
    const alternatives = /^[^'"`]*\?\s*(['"].*['"])\s*:\s*(['"].*['"])$/s.exec(messageText);
    const fallback = /^[^'"`]*\?\?\s*(['"].*['"])$/s.exec(messageText);
    const messages = alternatives ? [alternatives[1]!, alternatives[2]!] : fallback ? [fallback[1]!] : [messageText];
    for (const text of messages) {
      calls.push({
        file,
        line: source.slice(0, match.index).split('\n').length,
        method: startup ? 'startupError' : (match[2] as LogCall['method']),
        level: startup ? Number(args[1] ?? 0) : Number(match[1] ?? 0),
        message: literal(text) ?? text,
        keys,
      });
    }
  }
  return calls;
}
