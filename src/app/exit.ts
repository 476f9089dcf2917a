// How the `csi-resizer` process ends (§1), and the one place that turns each ending into what it
// prints and its exit code. Everything that ends the process resolves to a ProcessEnd; only
// main.ts calls process.exit, with the code `endProcess` returns. (One exception is Go's runtime
// behaviour for an unhandled signal with ReleaseLeaderElectionOnExit off: see
// `dieOnSignals` in lifecycle.ts.)
import type { StartupError } from './startup-error.js';
import { createLogger, type Logger } from '../observability/log/logger.js';
import type { ConfigError } from '../flags/config.js';
import type { FeatureGateError } from '../flags/feature-gates.js';

export const ExitCode = {
  Ok: 0,
  Failure: 1,
  /** Go's flag package after an unknown flag or a bad value. */
  Usage: 2,
  /** A Go panic, e.g. client-go's RunOrDie on leader-election durations it refuses. */
  Panic: 2,
  /** klog.Fatalf, e.g. "CSI driver does not support resize nor modify". */
  Fatal: 255,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Every way the process ends. A closed set: `endProcess` handles each kind once. */
export type ProcessEnd =
  /** -h: Go's flag package prints the usage on stderr. */
  | { readonly kind: 'helpShown'; readonly usage: string }
  | { readonly kind: 'versionShown'; readonly line: string }
  /** `doctor` or `explain` ran and printed its report; the code says what it found. */
  | { readonly kind: 'subcommandDone'; readonly code: number }
  /** An unknown flag or a bad value. */
  | { readonly kind: 'badFlags'; readonly error: ConfigError }
  /** A logging flag component-base's LoggingConfiguration check refuses (no configured logger yet). */
  | { readonly kind: 'badLoggingConfig'; readonly error: ConfigError }
  | { readonly kind: 'conflictingHttpFlags' }
  | { readonly kind: 'badFeatureGates'; readonly error: FeatureGateError }
  /** Startup (client, driver, capabilities, back-ends, leader election setup) failed: upstream's message and code. */
  | { readonly kind: 'startupFailed'; readonly error: StartupError }
  | { readonly kind: 'httpServerFailed'; readonly error: unknown; readonly address: string; readonly metricsPath: string }
  /** The CSI driver came back under another name after a reconnect. */
  | { readonly kind: 'driverRenamed'; readonly error: Error }
  /** The controllers stopped on their own, outside a shutdown. */
  | { readonly kind: 'controllersFailed'; readonly error: unknown }
  /** The Lease was lost while still wanted (the elector has logged "Stopped leading"); drained first. */
  | { readonly kind: 'leadershipLost' }
  /** A second SIGTERM/SIGINT while draining. */
  | { readonly kind: 'forced'; readonly signal: NodeJS.Signals }
  /** A shutdown signal, drained (or cut short at --timeout): the clean end. */
  | { readonly kind: 'stopped' };

export interface EndOutput {
  /** The configured logger; undefined for endings before the flags say how to log. */
  readonly log: Logger | undefined;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const withNewline = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);

/** Prints what the ending says (upstream's message where it has one) and returns the exit code. */
export function endProcess(end: ProcessEnd, out: EndOutput): number {
  // Before the flags are read, klog's defaults: text at verbosity 0.
  const log = out.log ?? createLogger({ verbosity: 0, format: 'text' });
  switch (end.kind) {
    case 'helpShown':
      // Go's flag package: usage on stderr, exit 0.
      out.stderr(withNewline(end.usage));
      return ExitCode.Ok;
    case 'versionShown':
      out.stdout(end.line);
      return ExitCode.Ok;
    case 'subcommandDone':
      return end.code;
    case 'badFlags':
      out.stderr(`${end.error.message}\n${withNewline(end.error.usage)}`);
      return ExitCode.Usage;
    case 'badLoggingConfig':
      log.error('LoggingConfiguration is invalid', { err: end.error.message });
      return ExitCode.Failure;
    case 'conflictingHttpFlags':
      log.error('Only one of `--metrics-address` and `--http-endpoint` can be set.');
      return ExitCode.Failure;
    case 'badFeatureGates':
      log.error('Failed to set feature gates', { err: end.error.message });
      return ExitCode.Failure;
    case 'startupFailed': {
      // upstream's fixed message with the cause in `err`; exit code 255 is klog.Fatalf's.
      const err = end.error;
      if (err.exitCode === ExitCode.Fatal) log.fatalf(err.message);
      else log.error(err.message, err.cause === undefined ? undefined : { err: err.cause });
      return err.exitCode;
    }
    case 'httpServerFailed':
      log.error('Failed to start HTTP server', { err: end.error, address: end.address, metricsPath: end.metricsPath });
      return ExitCode.Failure;
    case 'driverRenamed':
      log.error('CSI driver name changed, exiting', { err: end.error.message });
      return ExitCode.Failure;
    case 'controllersFailed':
      log.error('Controllers stopped unexpectedly', { err: end.error });
      return ExitCode.Failure;
    case 'leadershipLost':
      return ExitCode.Failure;
    case 'forced':
      log.info('Received second signal, exiting immediately', { signal: end.signal });
      return ExitCode.Failure;
    case 'stopped':
      return ExitCode.Ok;
    default: {
      const unknown: never = end;
      throw new Error(`unhandled process end ${JSON.stringify(unknown)}`);
    }
  }
}
