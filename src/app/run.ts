// The `csi-resizer` command from its arguments to how it ends (§1 steps 1–5): the `doctor` and
// `explain` subcommands, the flags, -h and --version, the logger, the Version line, the HTTP flag
// check and the feature gates; then the process runner. -h, --version and flag errors answer
// before the controllers' modules are even imported. app/exit.ts reports the ending.
import { basename } from 'node:path';
import { applyFeatureGates, ConfigError, parseCommandLine, type CommandLine, type Config } from '../flags/config.js';
import type { ProcessEnd } from './exit.js';
import { FeatureGateError } from '../flags/feature-gates.js';
import { isSubcommand, runSubcommand } from '../diagnose/subcommands.js';
import type { ProcessSignals } from './os-signals.js';
import { LoggingConfigError, type LoggingFlags } from '../flags/logging-flags.js';
import { runProcess, type ProcessParts } from './process-runner.js';
import { readVersion } from './version.js';
import { createLogOutput } from '../observability/log/output.js';
import { createLogger, type Logger } from '../observability/log/logger.js';

export interface CommandHost {
  /** The arguments after node and the script. */
  readonly args: readonly string[];
  /** The script as invoked (argv[1]), for the program name. */
  readonly scriptPath: string | undefined;
  /** The entry module's URL (src/main.ts or dist/main.js): the version is read beside it. */
  readonly entryUrl: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly signals: ProcessSignals;
  /** Default: the real ones, loaded once the flags are read. */
  readonly parts?: ProcessParts;
}

export interface CommandResult {
  readonly end: ProcessEnd;
  /** The logger the flags configured, when they got that far. */
  readonly log: Logger | undefined;
}

/** The name the usage and --version print: the command as invoked, `csi-resizer` for main.js/main.ts. */
export function programName(scriptPath: string | undefined): string {
  const invoked = basename(scriptPath ?? 'csi-resizer').replace(/\.(c|m)?(js|ts)$/, '');
  return invoked === '' || invoked === 'main' ? 'csi-resizer' : invoked;
}

/** The logger the flags describe: format, -v, --vmodule and the stream options of that format. */
function createConfiguredLogger(config: LoggingFlags): Logger {
  const json = config.loggingFormat === 'json';
  const output = createLogOutput({
    splitStream: json ? config.logJsonSplitStream : config.logTextSplitStream,
    infoBufferBytes: json ? config.logJsonInfoBufferBytes : config.logTextInfoBufferBytes,
    flushIntervalMs: config.logFlushFrequencyMs,
  });
  return createLogger({ verbosity: config.verbosity, format: config.loggingFormat, vmodule: config.vmodule, output });
}

export async function runCommand(host: CommandHost): Promise<CommandResult> {
  const program = programName(host.scriptPath);
  const [first, ...rest] = host.args;
  if (isSubcommand(first)) {
    const code = await runSubcommand(first, rest, { program, out: host.stdout, err: host.stderr });
    return { end: { kind: 'subcommandDone', code }, log: undefined };
  }

  let commandLine: CommandLine;
  try {
    commandLine = parseCommandLine(host.args, program);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (err.helpRequested) return { end: { kind: 'helpShown', usage: err.usage }, log: undefined };
    if (err.cause instanceof LoggingConfigError) return { end: { kind: 'badLoggingConfig', error: err }, log: undefined };
    return { end: { kind: 'badFlags', error: err }, log: undefined };
  }
  const version = readVersion(host.entryUrl);
  if (commandLine.showVersion) return { end: { kind: 'versionShown', line: `${program} ${version}\n` }, log: undefined };

  const log = createConfiguredLogger(commandLine);
  log.info('Version', { version });
  if (commandLine.positionalArgs.length > 0) log.warn('Ignoring arguments after the flags', { args: commandLine.positionalArgs });
  if (commandLine.metricsAddress !== '' && commandLine.httpEndpoint !== '') return { end: { kind: 'conflictingHttpFlags' }, log };

  // The sidecar's "Failed to set feature gates" step: after the version line, before anything connects.
  let config: Config;
  try {
    const applied = applyFeatureGates(commandLine);
    for (const w of applied.warnings) log.info(w.message, { featureGate: w.featureGate, value: w.value });
    config = applied.config;
  } catch (err) {
    if (!(err instanceof FeatureGateError)) throw err;
    return { end: { kind: 'badFeatureGates', error: err }, log };
  }
  return { end: await runProcess({ config, log, version, signals: host.signals, parts: host.parts }), log };
}
