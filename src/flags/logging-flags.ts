// The logging flags of component-base's logs API v1 (logsapi.AddGoFlags), with its help texts,
// defaults and value syntax, and the checks its ValidateAndApply makes, with its messages.
// A failed check is a LoggingConfigError; main logs it as "LoggingConfiguration is invalid" and
// exits 1, as upstream does.
//
// One deliberate difference: upstream registers the four alpha stream options but can never
// enable their LoggingAlphaOptions gate (its logging gate set is not the one --feature-gates
// sets), so setting one makes it exit 1. Here they work as component-base documents them.
import { parseQuantity } from '../model/quantity.js';
import { parseVModule, type VModuleEntry } from '../observability/log/vmodule.js';
import { formatGoDuration } from './go-duration.js';
import type { FlagSet, FlagValue } from './go-flags.js';

export type LoggingFormat = 'text' | 'json';

export interface LoggingFlags {
  readonly verbosity: number;
  /** --vmodule as component-base prints it back: `pattern=N,...` (every item, N=0 included). */
  readonly vmodule: string;
  readonly loggingFormat: LoggingFormat;
  readonly logFlushFrequencyMs: number;
  readonly logTextSplitStream: boolean;
  readonly logTextInfoBufferBytes: number;
  readonly logJsonSplitStream: boolean;
  readonly logJsonInfoBufferBytes: number;
}

/** A LoggingConfiguration that component-base's validation refuses; the message is its error list. */
export class LoggingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoggingConfigError';
  }
}

/** `-v`: component-base's VerbosityLevel, strconv.ParseUint(s, 10, 31). */
class VerbosityValue implements FlagValue {
  readonly zeroString = '0';
  level = 0;
  set(raw: string): void {
    this.level = parseUint31(raw);
  }
  toString(): string {
    return String(this.level);
  }
}

/** `--vmodule`: component-base's VModuleConfiguration; every use adds to the list. */
class VModuleValue implements FlagValue {
  readonly zeroString = '';
  entries: VModuleEntry[] = [];
  set(raw: string): void {
    this.entries = [...this.entries, ...parseVModule(raw)];
  }
  toString(): string {
    return this.entries.map((e) => `${e.pattern}=${e.level}`).join(',');
  }
}

/** A resource.QuantityValue: any Kubernetes quantity; the value is its byte count rounded up. */
class QuantityValue implements FlagValue {
  readonly zeroString = '0';
  text = '0';
  bytes = 0;
  set(raw: string): void {
    const quantity = parseQuantity(raw);
    const bytes = quantity.toBytes();
    this.text = quantity.toString();
    this.bytes = bytes > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(bytes);
  }
  toString(): string {
    return this.text;
  }
}

function parseUint31(raw: string): number {
  if (!/^[0-9]+$/.test(raw)) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`);
  const value = Number(raw);
  if (value > 2 ** 31 - 1) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(raw)}: value out of range`);
  return value;
}

const BUFFER_HELP = (format: string) =>
  `[Alpha] In ${format} format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.`;
const SPLIT_HELP = (format: string) =>
  `[Alpha] In ${format} format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.`;

/** Defines the logging flags; the returned reader validates them as ValidateAndApply does. */
export function defineLoggingFlags(flags: FlagSet): () => LoggingFlags {
  const verbosity = flags.var(new VerbosityValue(), 'v', 'number for the log level verbosity');
  const vmodule = flags.var(
    new VModuleValue(),
    'vmodule',
    'comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)',
  );
  const format = flags.string('logging-format', 'text', 'Sets the log format. Permitted formats: "json" (gated by LoggingBetaOptions), "text".');
  const flush = flags.durationMs('log-flush-frequency', 5_000, 'Maximum number of seconds between log flushes');
  const textSplit = flags.bool('log-text-split-stream', false, SPLIT_HELP('text'));
  const textBuffer = flags.var(new QuantityValue(), 'log-text-info-buffer-size', BUFFER_HELP('text'));
  const jsonSplit = flags.bool('log-json-split-stream', false, SPLIT_HELP('JSON'));
  const jsonBuffer = flags.var(new QuantityValue(), 'log-json-info-buffer-size', BUFFER_HELP('JSON'));

  return () => {
    const problems: string[] = [];
    const formatName = format.value;
    // The value as metav1.Duration marshals it: Go's duration text, quoted.
    if (flush.value <= 0) problems.push(`flushFrequency: Invalid value: "${formatGoDuration(flush.value)}": Must be greater than zero`);
    if (formatName !== 'text' && formatName !== 'json') problems.push(`format: Invalid value: ${JSON.stringify(formatName)}: Unsupported log format`);
    if (vmodule.value.entries.length > 0 && formatName !== '' && formatName !== 'text') problems.push('vmodule: Forbidden: Only supported for text log format');
    // component-base's field.ErrorList.ToAggregate: one error alone, several in brackets.
    if (problems.length > 0) throw new LoggingConfigError(problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);
    return {
      verbosity: verbosity.value.level,
      vmodule: vmodule.value.toString(),
      loggingFormat: formatName as LoggingFormat,
      logFlushFrequencyMs: flush.value,
      logTextSplitStream: textSplit.value,
      logTextInfoBufferBytes: textBuffer.value.bytes,
      logJsonSplitStream: jsonSplit.value,
      logJsonInfoBufferBytes: jsonBuffer.value.bytes,
    };
  };
}
