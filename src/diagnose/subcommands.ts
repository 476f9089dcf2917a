// The read-only subcommands beside the sidecar: `csi-resizer doctor` and `csi-resizer explain
// NAMESPACE/PVC`. Both take every flag of the sidecar (so an operator can reuse the container's
// args) plus --output text|json, print their report on stdout, and say with the exit status
// whether anything is wrong: 0 healthy, 1 a problem found (doctor) or the claim could not be read
// (explain), 2 a usage error.
import { messageOf } from '../base/errors.js';
import { linkedSignal, type LinkedSignal } from '../base/signals.js';
import { ConfigError, parseConfig, type Config } from '../flags/config.js';
import type { FlagSet } from '../flags/go-flags.js';
import { createLogger } from '../observability/log/logger.js';

/** The exit status of a subcommand (the process exits with it): the same numbers as the sidecar's own. */
export const SubcommandExit = {
  /** doctor found nothing failing; explain explained the claim; or -h. */
  Ok: 0,
  /** doctor found a failing check; explain could not find or read the claim. */
  Failure: 1,
  /** A bad flag or argument, as Go's flag package. */
  Usage: 2,
} as const;

export const SUBCOMMANDS = ['doctor', 'explain'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

export function isSubcommand(arg: string | undefined): arg is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(arg ?? '');
}

type Output = 'text' | 'json';

function parse(args: readonly string[], program: string): { config: Config; output: Output } {
  let output: { value: string } | undefined;
  const config = parseConfig(args, program, (flags: FlagSet) => {
    output = flags.string('output', 'text', 'Report format: text or json.');
  });
  const value = output?.value ?? 'text';
  if (value !== 'text' && value !== 'json') throw new ConfigError(`invalid value "${value}" for flag -output: must be text or json`, '');
  return { config, output: value };
}

/** Runs a subcommand to completion and returns the exit code; writes the report to `out`. */
export async function runSubcommand(
  command: Subcommand,
  args: readonly string[],
  io: { program: string; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const program = `${io.program} ${command}`;
  // explain takes its NAMESPACE/PVC first or after the flags.
  let claim: string | undefined;
  let flagArgs = args;
  if (command === 'explain' && args[0] !== undefined && !args[0].startsWith('-')) {
    claim = args[0];
    flagArgs = args.slice(1);
  }
  let parsed: { config: Config; output: Output };
  try {
    parsed = parse(flagArgs, program);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(err.helpRequested ? err.usage : `${err.message}\n${err.usage}`);
      return err.helpRequested ? SubcommandExit.Ok : SubcommandExit.Usage;
    }
    throw err;
  }
  const { config, output } = parsed;
  // The report is the output; the sidecar's own log lines (CSI connection...) only from -v=2 on.
  const log = createLogger({ verbosity: config.verbosity - 2, format: config.loggingFormat });
  const deadline = subcommandDeadline(config);
  const signal = deadline.signal;
  try {
    if (command === 'doctor') {
      const { runDoctor } = await import('./doctor.js');
      const { renderDoctorJson, renderDoctorText } = await import('./doctor-report.js');
      const report = await runDoctor({ config, log }, signal);
      io.out(output === 'json' ? renderDoctorJson(report) : renderDoctorText(report));
      return report.healthy ? SubcommandExit.Ok : SubcommandExit.Failure;
    }

    const positional = config.positionalArgs;
    if (claim === undefined && positional.length === 1) claim = positional[0];
    else if (claim !== undefined && positional.length > 0) claim = undefined;
    if (claim === undefined) {
      io.err(`usage: ${program} NAMESPACE/PVC [flags]\n`);
      return SubcommandExit.Usage;
    }
    const { runExplain, ExplainInputError } = await import('./explain-facts.js');
    const { renderExplanation, renderExplanationJson } = await import('./explain-report.js');
    try {
      const result = await runExplain({ config, log, claim }, signal);
      if (output === 'json') {
        io.out(renderExplanationJson(result.key, result.explanation, result.unknown));
      } else {
        io.out(renderExplanation(result.key, result.explanation, new Date()));
        for (const u of result.unknown) io.out(`(could not read ${u})\n`);
      }
      return result.explanation.claimFound ? SubcommandExit.Ok : SubcommandExit.Failure;
    } catch (err) {
      if (err instanceof ExplainInputError) {
        io.err(`${err.message}\n`);
        return SubcommandExit.Usage;
      }
      io.err(`explain ${claim}: ${messageOf(err)}\n`);
      return SubcommandExit.Failure;
    }
  } finally {
    deadline.dispose();
  }
}

/**
 * The whole subcommand's deadline: three --timeout (a driver call and a few API calls), at least a
 * minute, of any length a flag can give (AbortSignal.timeout refuses a delay beyond 2^32-1 ms and
 * fires one beyond 2^31-1 ms at once; linkedSignal waits it out in steps).
 */
export function subcommandDeadline(config: Pick<Config, 'timeoutMs'>): LinkedSignal {
  return linkedSignal(new AbortController().signal, Math.max(60_000, config.timeoutMs * 3));
}
