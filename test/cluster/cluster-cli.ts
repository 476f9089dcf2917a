// scripts/cluster.sh up|down: a cluster that outlives the command, for the demo and manual work.
// `up` writes .cluster/env (the run-with-cluster keys) and .cluster/pids; `down` stops exactly the
// recorded pids (checking that each still runs the recorded binary) and removes their data.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from './cluster.js';
import { parseEnvFile, repoRoot } from './components.js';
import { stopPid } from './process.js';

// CSI_RESIZER_CLUSTER_STATE moves the state directory (e.g. to run a second cluster beside one
// that is already up).
const stateDir = process.env['CSI_RESIZER_CLUSTER_STATE'] || join(repoRoot, '.cluster');
const pidsFile = join(stateDir, 'pids');
const envFile = join(stateDir, 'env');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function recorded(): Array<{ name: string; pid: number; bin: string }> {
  if (!existsSync(pidsFile)) return [];
  return readFileSync(pidsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', pid = '0', bin = ''] = line.split(' ');
      return { name, pid: Number(pid), bin };
    });
}

function runsBinary(pid: number, bin: string): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 === bin;
  } catch {
    return false;
  }
}

async function up(): Promise<void> {
  const running = recorded().filter((p) => isAlive(p.pid) && runsBinary(p.pid, p.bin));
  if (running.length > 0) {
    throw new Error(`a cluster is already up (pids ${running.map((p) => p.pid).join(', ')}); run npm run cluster:down first`);
  }
  const cluster = await startCluster({ detached: true, progress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
  mkdirSync(stateDir, { recursive: true });
  const { components } = cluster;
  // Stop order: driver, apiserver, etcd.
  writeFileSync(
    pidsFile,
    [
      `driver ${cluster.pids.driver} ${components.mockDriverBin}`,
      `apiserver ${cluster.pids.apiserver} ${components.kubeApiserverBin}`,
      `etcd ${cluster.pids.etcd} ${components.etcdBin}`,
    ].join('\n') + '\n',
  );
  writeFileSync(envFile, readFileSync(cluster.envFile, 'utf8'));
  process.stdout.write(`cluster up in ${cluster.startupMs}ms\n${readFileSync(envFile, 'utf8')}`);
}

async function down(): Promise<void> {
  const procs = recorded();
  if (procs.length === 0) {
    process.stderr.write('no cluster recorded in .cluster/pids\n');
  }
  for (const p of procs) {
    if (!isAlive(p.pid)) continue;
    if (!runsBinary(p.pid, p.bin)) {
      process.stderr.write(`pid ${p.pid} no longer runs ${p.bin}; leaving it alone\n`);
      continue;
    }
    await stopPid(p.pid, p.name === 'apiserver' ? 10_000 : 5000);
    process.stderr.write(`stopped ${p.name} (pid ${p.pid})\n`);
  }
  if (existsSync(envFile)) {
    const env = parseEnvFile(readFileSync(envFile, 'utf8'));
    for (const key of ['ETCD_DATA_DIR', 'CLUSTER_DIR']) {
      const dir = env.get(key);
      if (dir && (dir.startsWith('/tmp/rz-') || dir.startsWith('/dev/shm/rz-'))) rmSync(dir, { recursive: true, force: true });
    }
  }
  rmSync(pidsFile, { force: true });
  rmSync(envFile, { force: true });
}

/** Warm start and stop times of a throwaway cluster (the figures in docs/development.md, "Local control plane"). */
async function time(): Promise<void> {
  const runs = Number(process.argv[3] ?? '3');
  for (let i = 1; i <= runs; i++) {
    const cluster = await startCluster({ progress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
    const stopStart = Date.now();
    await cluster.stop();
    process.stdout.write(`run ${i}: ready in ${cluster.startupMs}ms, stopped in ${Date.now() - stopStart}ms\n`);
  }
}

const verb = process.argv[2];
const action = verb === 'up' ? up : verb === 'down' ? down : verb === 'time' ? time : undefined;
if (!action) {
  process.stderr.write('usage: scripts/cluster.sh up|down|time [runs]\n');
  process.exit(2);
}
action().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`[cluster] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
