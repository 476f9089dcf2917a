// Structured logger with klog-style verbosity: `info` at level 0 always prints, `v(n)` prints only
// when `-v` is at least n. Text output follows klog's `I1129 17:13:34.123456 pid file] msg k=v`
// shape loosely (message first, then quoted fields); JSON output is one object per line with
// `ts`, `v`, `msg` and the fields. Fields whose key says secret are never printed.
//
// Hand-written: pino and friends have no verbosity gate and no klog text format (see README).

export type LogFields = Readonly<Record<string, unknown>>;
export type LogFormat = 'text' | 'json';

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that prints only when verbosity >= level; a no-op otherwise. */
  v(level: number): Pick<Logger, 'info'>;
  enabled(level: number): boolean;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  verbosity: number;
  format: LogFormat;
  write?: (line: string) => void;
  now?: () => Date;
}

const SECRET_KEY = /secret|token|password|credential/i;

function redact(fields: LogFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_KEY.test(key) ? '<redacted>' : value;
  }
  return out;
}

function textValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return JSON.stringify(value.message);
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'undefined';
}

function klogStamp(severity: string, now: Date): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${severity}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds(), 3)}000 ${process.pid}]`;
}

export function createLogger(options: LoggerOptions, bound: LogFields = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const now = options.now ?? (() => new Date());

  const emit = (severity: 'I' | 'W' | 'E', level: number, msg: string, fields?: LogFields) => {
    const all = redact({ ...bound, ...fields });
    if (options.format === 'json') {
      const entry: Record<string, unknown> = { ts: now().getTime() / 1000, v: level, msg };
      if (severity === 'E') entry['err'] = all['err'] === undefined ? undefined : String(all['err']);
      write(JSON.stringify({ ...entry, ...all }, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v instanceof Error ? v.message : v));
      return;
    }
    const parts = Object.entries(all).map(([k, v]) => `${k}=${textValue(v)}`);
    write([klogStamp(severity, now()), JSON.stringify(msg), ...parts].join(' '));
  };

  const logger: Logger = {
    info: (msg, fields) => emit('I', 0, msg, fields),
    warn: (msg, fields) => emit('W', 0, msg, fields),
    error: (msg, fields) => emit('E', 0, msg, fields),
    enabled: (level) => options.verbosity >= level,
    v: (level) => ({
      info: (msg, fields) => {
        if (options.verbosity >= level) emit('I', level, msg, fields);
      },
    }),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
  return logger;
}

/** A logger that prints nothing, for tests that don't look at logs. */
export const silentLogger: Logger = createLogger({ verbosity: 0, format: 'text', write: () => {} });
