// Reads the usage text a Go binary prints for -h (the flag package's PrintDefaults, which ours
// reproduces), back into flags: name, the type word after it, the help text and the printed
// default. And, from the help text of -feature-gates, component-base's KnownFeatures lines.
//
// PrintDefaults writes one block per flag, sorted by name: "  -name[ word]", then the help on the
// following lines, each indented by four spaces and a tab ("    \t"), the last ending in
// " (default X)" unless the default is the type's zero value. A one-letter flag without a type
// word has its help on the same line after a tab. Everything is kept as printed: a string default
// stays quoted, so "same text" means "same value".

export interface FlagUsage {
  readonly name: string;
  /** The word after the name ("string", "duration", "value", a back-quoted word of the help), "" for booleans. */
  readonly typeWord: string;
  /** The help text, lines joined with "\n", without the default. */
  readonly help: string;
  /** What follows "(default " as printed (a string default keeps its quotes); undefined for a zero default. */
  readonly printedDefault: string | undefined;
}

export interface GateUsage {
  readonly name: string;
  /** ALPHA, BETA (component-base's prerelease words; GA and deprecated gates are not listed). */
  readonly stage: string;
  readonly default: boolean;
}

const BLOCK_START = /^ {2}-(\S+)(?: ([^\t]*))?(?:\t(.*))?$/;
const CONTINUATION = '    \t';
const DEFAULT_SUFFIX = / \(default (.*)\)$/;

/** The flags of a `-h` text, by name. Throws on a line that belongs to no flag (not a usage text). */
export function parseGoUsage(text: string): Map<string, FlagUsage> {
  const lines = text.split('\n');
  const flags = new Map<string, FlagUsage>();
  let current: { name: string; typeWord: string; lines: string[] } | undefined;
  const finish = () => {
    if (!current) return;
    const help = current.lines.join('\n');
    const match = DEFAULT_SUFFIX.exec(help);
    flags.set(current.name, {
      name: current.name,
      typeWord: current.typeWord,
      help: match ? help.slice(0, match.index) : help,
      printedDefault: match ? match[1] : undefined,
    });
    current = undefined;
  };
  for (const [index, line] of lines.entries()) {
    if (line.startsWith(CONTINUATION)) {
      if (!current) throw new Error(`usage line ${index + 1} continues no flag: ${JSON.stringify(line)}`);
      current.lines.push(line.slice(CONTINUATION.length));
      continue;
    }
    const start = BLOCK_START.exec(line);
    if (start) {
      finish();
      current = { name: start[1]!, typeWord: start[2] ?? '', lines: start[3] === undefined ? [] : [start[3]] };
      continue;
    }
    // The header ("Usage of csi-resizer:") and the blank last line belong to no flag.
    if (line === '' || (index === 0 && line.startsWith('Usage of '))) continue;
    throw new Error(`usage line ${index + 1} is not part of Go's flag usage: ${JSON.stringify(line)}`);
  }
  finish();
  if (flags.size === 0) throw new Error('no flags in the usage text');
  return flags;
}

const GATE_LINE = /^(\w+)=true\|false \(([A-Z]+) - default=(true|false)\)/;

/**
 * The -feature-gates help split into its prose and the gates it lists (one
 * `Name=true|false (STAGE - default=x)` line each, after the prose).
 */
export function splitGateHelp(help: string): { prose: string; gates: Map<string, GateUsage> } {
  const prose: string[] = [];
  const gates = new Map<string, GateUsage>();
  for (const line of help.split('\n')) {
    const m = GATE_LINE.exec(line);
    if (m) gates.set(m[1]!, { name: m[1]!, stage: m[2]!, default: m[3] === 'true' });
    else prose.push(line);
  }
  return { prose: prose.join('\n'), gates };
}
