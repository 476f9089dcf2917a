// node --import tsx test/cluster/run-with-cluster.ts -- <command...>
//
// Starts one local control plane, runs the command with CSI_RESIZER_TEST_CLUSTER=<env file>, stops
// the cluster afterwards (also on SIGINT/SIGTERM), prints log tails if the command failed, and
// exits with the command's status.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { startCluster, type Cluster } from './cluster.js';
import { printTails } from './process.js';
import { CLUSTER_ENV_VAR } from './test-cluster.js';

async function main(argv: string[]): Promise<number> {
  const sep = argv.indexOf('--');
  const command = sep >= 0 ? argv.slice(sep + 1) : argv;
  if (command.length === 0) {
    process.stderr.write('usage: node --import tsx test/cluster/run-with-cluster.ts -- <command...>\n');
    return 2;
  }

  let cluster: Cluster | undefined;
  let failed = false;
  let interrupted: NodeJS.Signals | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted ??= signal;
    // The child shares our process group for SIGINT from a terminal; SIGTERM must be forwarded.
    if (child?.pid !== undefined && child.exitCode === null) child.kill(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    cluster = await startCluster({ progress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
    process.stderr.write(`[cluster] ready in ${cluster.startupMs}ms; env in ${cluster.envFile}\n`);
    if (interrupted) return 128 + constants.signals[interrupted];

    const [cmd, ...args] = command as [string, ...string[]];
    child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, [CLUSTER_ENV_VAR]: cluster.envFile } });
    const status = await new Promise<number>((resolve) => {
      child!.once('error', (err) => {
        process.stderr.write(`[cluster] could not run ${cmd}: ${err.message}\n`);
        resolve(127);
      });
      child!.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    });
    if (status !== 0) {
      process.stderr.write(`[cluster] command exited with status ${status}; component logs follow\n`);
      printTails(cluster.logs);
      process.stderr.write(`[cluster] logs kept in ${cluster.dir}\n`);
      failed = true;
    }
    return status;
  } finally {
    await cluster?.stop({ keepLogs: failed || interrupted !== undefined });
  }
}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(`[cluster] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
