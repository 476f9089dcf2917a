// Structured logger that writes what upstream's sidecar writes (klog through component-base):
//
//   text  `I1201 06:53:18.898123   18389 reconcile.ts:102] "msg" err="…" k="v"`: severity, local
//         date and time to the microsecond, the pid right-aligned in 7 columns, the call's source
//         file and line, the Go-quoted message, then key=value pairs (values.ts). Lines from
//         the `…f` methods (klog.Infof and friends upstream) print the message unquoted, alone.
//   json  `{"ts":1764571998898.123,"caller":"resize/reconcile.ts:102","msg":"…","v":0,"k":"v"}`
//         as zap writes it through zapr: ts in epoch milliseconds, `v` on info lines, `err` last
//         on error lines. klog.V(n).InfoS lines report `"v":0` upstream (klog hands them to the
//         backend at level 0), and so do ours; a `contextual()` logger reports the call's level,
//         as a logr.Logger from klog.FromContext does (leader election, the CSI connection).
//
// `-v` gates `v(n)` lines; --vmodule raises the level per source file (vmodule.ts). The source
// position comes from one V8 call-site capture, mapped through the source map and cached per
// call site (caller.ts); it is taken only for a line that will be written, and for a `v(n)`
// line above -v only when --vmodule is set: the position is about half of a written line's cost,
// and a `v(n)` line below -v costs next to nothing without --vmodule (bench/logger-cost.ts;
// docs/performance.md, "The logger's cost").
//
// Logging never throws: a value that can't be encoded is printed as klog and zap print such a
// value, and any other failure (a stream gone) loses the line, not the caller's work. Fields
// whose key names a secret are printed as `<redacted>`.
//
// Hand-written: pino and friends have no verbosity gate and no klog text format (docs/architecture.md, "What we write ourselves").
import { callerOf, type CallerPosition } from './caller.js';
import { createLogOutput, type LogOutput } from './output.js';
import { goQuote } from '../../base/go-quote.js';
import { errorMessage, goFloatF, jsonField, jsonString, messageText, textField, textValue } from './values.js';
import { parseVModule, VModule, type VModuleEntry } from './vmodule.js';

export { kKey, kObj, kRef, ObjectRef } from './values.js';

export type LogFields = Readonly<Record<string, unknown>>;
export type LogFormat = 'text' | 'json';

export interface VerboseLogger {
  /** klog.V(n).InfoS. */
  info(msg: string, fields?: LogFields): void;
  /** klog.V(n).Infof / Info: the text as is, no fields. */
  infof(text: string): void;
}

export interface Logger extends VerboseLogger {
  /** A warning (upstream has no structured warnings; klog.Warningf lines use warnf). */
  warn(msg: string, fields?: LogFields): void;
  /** klog.Warningf: the text as is. */
  warnf(text: string): void;
  /** klog.ErrorS: the `err` field is the error (left out when absent), the rest are pairs. */
  error(msg: string, fields?: LogFields): void;
  /** klog.Errorf: the text as is. */
  errorf(text: string): void;
  /** klog.Fatalf's line (severity F; JSON: an info line, as klog hands it to the backend). The caller exits. */
  fatalf(text: string): void;
  /** A logger that prints only when verbosity (or --vmodule for the calling file) >= level. */
  v(level: number): VerboseLogger;
  /** Whether v(level) lines of the calling file print. */
  enabled(level: number): boolean;
  /** A logger that adds these fields to every line (logr WithValues). */
  child(fields: LogFields): Logger;
  /** A logger whose JSON lines carry the call's verbosity in `v` (a logr.Logger upstream). */
  contextual(): Logger;
}

export interface LoggerOptions {
  verbosity: number;
  format: LogFormat;
  /** --vmodule, text format only (component-base refuses it for JSON). */
  vmodule?: string | readonly VModuleEntry[];
  /** Receives every line (without newline); overrides `output`. For tests. */
  write?: (line: string) => void;
  /** Where lines go; stderr by default. */
  output?: LogOutput;
  /** Epoch milliseconds with a fraction; wallClockMs() by default. */
  nowMs?: () => number;
  pid?: number;
}

type Severity = 'I' | 'W' | 'E' | 'F';

const SECRET_KEY = /secret|token|password|credential/i;

/** Shared state of a logger and all its children. */
interface Core {
  readonly verbosity: number;
  readonly json: boolean;
  readonly vmodule: VModule;
  readonly output: LogOutput;
  readonly nowMs: () => number;
  readonly pid: string;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The header's `mmdd hh:mm:ss` for the last second printed: lines within a second share it. */
let lastSecond = { epochSecond: Number.NaN, text: '' };

/** klog's header: `Lmmdd hh:mm:ss.uuuuuu ppppppp file:line] `. */
function klogHeader(severity: Severity, ms: number, pid: string, caller: CallerPosition): string {
  const epochSecond = Math.floor(ms / 1000);
  if (epochSecond !== lastSecond.epochSecond) {
    const date = new Date(epochSecond * 1000);
    lastSecond = {
      epochSecond,
      text: `${pad2(date.getMonth() + 1)}${pad2(date.getDate())} ${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`,
    };
  }
  const micros = Math.floor((ms - epochSecond * 1000) * 1000);
  return `${severity}${lastSecond.text}.${String(Math.min(micros, 999_999)).padStart(6, '0')} ${pid} ${caller.file}:${caller.line}] `;
}

/**
 * The bound fields and the call's, secrets redacted; a bound key the call gives again is printed
 * once, at its later place (klog drops the earlier one).
 */
function splitFields(
  bound: readonly (readonly [string, unknown])[],
  fields: LogFields | undefined,
  skipKey?: string,
): {
  bound: [string, unknown][];
  own: [string, unknown][];
} {
  const own: [string, unknown][] = [];
  if (fields !== undefined) {
    for (const entry of safeEntries(fields)) {
      if (entry[0] === skipKey) continue;
      if (SECRET_KEY.test(entry[0])) entry[1] = '<redacted>';
      own.push(entry);
    }
  }
  const kept: [string, unknown][] = [];
  for (const [k, v] of bound) {
    if (k === skipKey || own.some(([ownKey]) => ownKey === k)) continue;
    kept.push([k, SECRET_KEY.test(k) ? '<redacted>' : v]);
  }
  return { bound: kept, own };
}

function safeEntries(fields: LogFields): [string, unknown][] {
  const out: [string, unknown][] = [];
  try {
    for (const key of Object.keys(fields)) {
      let value: unknown;
      try {
        value = fields[key];
      } catch (err) {
        value = `<panic: ${err instanceof Error ? err.message : 'unprintable exception'}>`;
      }
      out.push([key, value]);
    }
  } catch {
    // a proxy that refuses to list its keys: no fields
  }
  return out;
}

function errorField(fields: LogFields | undefined): unknown {
  if (fields === undefined) return undefined;
  try {
    return fields['err'];
  } catch (err) {
    return `<panic: ${err instanceof Error ? err.message : 'unprintable exception'}>`;
  }
}

class KlogVerbose implements VerboseLogger {
  constructor(
    private readonly logger: KlogLogger,
    private readonly level: number,
  ) {}

  info(msg: string, fields?: LogFields): void {
    const caller = this.logger.callerIfEnabled(this.level, KlogVerbose.prototype.info);
    if (caller) this.logger.emit('I', this.level, msg, fields, caller);
  }

  infof(text: string): void {
    const caller = this.logger.callerIfEnabled(this.level, KlogVerbose.prototype.infof);
    // klog.V(n).Infof reaches the backend as a level-0 line.
    if (caller) this.logger.emitText('I', text, caller);
  }
}

const DISABLED: VerboseLogger = { info: () => {}, infof: () => {} };

class KlogLogger implements Logger {
  constructor(
    private readonly core: Core,
    private readonly bound: readonly (readonly [string, unknown])[],
    private readonly reportsLevel: boolean,
  ) {}

  info(msg: string, fields?: LogFields): void {
    this.emit('I', 0, msg, fields, callerOf(KlogLogger.prototype.info));
  }

  infof(text: string): void {
    this.emitText('I', text, callerOf(KlogLogger.prototype.infof));
  }

  warn(msg: string, fields?: LogFields): void {
    this.emit('W', 0, msg, fields, callerOf(KlogLogger.prototype.warn));
  }

  warnf(text: string): void {
    this.emitText('W', text, callerOf(KlogLogger.prototype.warnf));
  }

  error(msg: string, fields?: LogFields): void {
    this.emit('E', 0, msg, fields, callerOf(KlogLogger.prototype.error));
  }

  errorf(text: string): void {
    this.emitText('E', text, callerOf(KlogLogger.prototype.errorf));
  }

  fatalf(text: string): void {
    this.emitText('F', text, callerOf(KlogLogger.prototype.fatalf));
  }

  v(level: number): VerboseLogger {
    if (this.core.verbosity >= level || !this.core.vmodule.isEmpty) return new KlogVerbose(this, level);
    return DISABLED;
  }

  enabled(level: number): boolean {
    if (this.core.verbosity >= level) return true;
    if (this.core.vmodule.isEmpty) return false;
    return this.core.vmodule.levelFor(callerOf(KlogLogger.prototype.enabled).file) >= level;
  }

  child(fields: LogFields): Logger {
    return new KlogLogger(this.core, [...this.bound.filter(([k]) => !(k in fields)), ...safeEntries(fields)], this.reportsLevel);
  }

  contextual(): Logger {
    return new KlogLogger(this.core, this.bound, true);
  }

  /** The caller of `below` when a line at `level` prints for it, else undefined. */
  callerIfEnabled(level: number, below: Function): CallerPosition | undefined {
    const caller = callerOf(below);
    if (this.core.verbosity >= level) return caller;
    return this.core.vmodule.levelFor(caller.file) >= level ? caller : undefined;
  }

  emit(severity: Severity, level: number, msg: string, fields: LogFields | undefined, caller: CallerPosition): void {
    try {
      const isError = severity === 'E';
      const err = isError ? errorField(fields) : undefined;
      const { bound, own } = splitFields(this.bound, fields, isError ? 'err' : undefined);
      const ms = this.core.nowMs();
      let line: string;
      if (this.core.json) {
        // zap: ts, caller, msg, the logger's own fields, then the call's (zapr puts `v` first, `err` last).
        line = `{"ts":${goFloatF(ms)},"caller":${jsonString(`${caller.shortFile}:${caller.line}`, 'zap')},"msg":${jsonString(messageText(msg), 'zap')}`;
        for (const [k, v] of bound) line += `,${jsonField(k, v)}`;
        if (!isError) line += `,"v":${this.reportsLevel ? level : 0}`;
        for (const [k, v] of own) line += `,${jsonField(k, v)}`;
        if (err !== undefined && err !== null) line += `,${jsonField('err', err instanceof Error ? errorMessage(err) : err)}`;
        line += '}';
      } else {
        // klog: the error first, then the logger's fields, then the call's.
        line = klogHeader(severity, ms, this.core.pid, caller) + goQuote(messageText(msg));
        if (err !== undefined && err !== null) line += ` err${textValue(err)}`;
        for (const [k, v] of bound) line += textField(k, v);
        for (const [k, v] of own) line += textField(k, v);
      }
      this.core.output.write(line, severity === 'I' || (this.core.json && severity === 'W'));
    } catch {
      // Logging never throws into the caller's work.
    }
  }

  emitText(severity: Severity, text: string, caller: CallerPosition): void {
    try {
      const ms = this.core.nowMs();
      const body = messageText(text).replace(/\n$/, '');
      const line = this.core.json
        ? `{"ts":${goFloatF(ms)},"caller":${jsonString(`${caller.shortFile}:${caller.line}`, 'zap')},"msg":${jsonString(body, 'zap')}${severity === 'E' ? '' : ',"v":0'}}`
        : klogHeader(severity, ms, this.core.pid, caller) + body;
      // Text split streams route on the severity letter; zap sees everything but errors as info.
      this.core.output.write(line, this.core.json ? severity !== 'E' : severity === 'I');
    } catch {
      // Logging never throws into the caller's work.
    }
  }
}

/**
 * Epoch milliseconds with a microsecond fraction: the wall clock read once, then advanced by the
 * monotonic clock, as performance.timeOrigin + performance.now() is. Not through `performance`:
 * its first use loads node:perf_hooks, on the first log line of every start.
 */
export function wallClockMs(): () => number {
  const base = process.hrtime.bigint();
  const originMs = Date.now();
  return () => originMs + Number(process.hrtime.bigint() - base) / 1e6;
}

export function createLogger(options: LoggerOptions, bound: LogFields = {}): Logger {
  const write = options.write;
  const output: LogOutput = write
    ? { write: (line) => write(line), flush: () => {}, close: () => {} }
    : (options.output ?? createLogOutput({ splitStream: false, infoBufferBytes: 0, flushIntervalMs: 5_000 }));
  const vmodule = typeof options.vmodule === 'string' ? parseVModule(options.vmodule) : (options.vmodule ?? []);
  const core: Core = {
    verbosity: options.verbosity,
    json: options.format === 'json',
    vmodule: new VModule(options.format === 'json' ? [] : vmodule),
    output,
    nowMs: options.nowMs ?? wallClockMs(),
    pid: String(options.pid ?? process.pid).padStart(7, ' '),
  };
  return new KlogLogger(core, safeEntries(bound), false);
}

/** A logger that prints nothing, for tests that don't look at logs. */
export const silentLogger: Logger = createLogger({ verbosity: 0, format: 'text', write: () => {} });
