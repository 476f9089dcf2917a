// The two programs the drift check compares: upstream's Go csi-resizer at a version, built by
// test/infra/build-components.sh --with-upstream=VERSION into the shared cache (once per version),
// and ours, the TypeScript sources run as the tests run them (src/main.ts under tsx, never a
// possibly stale dist/). Both are started the same way: a command, an argument list and an
// environment without the variables that would give either a cluster config of its own.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir, repoRoot } from '../../cluster/components.js';
import { MAIN_TS } from '../../integration/cli-harness.js';

const execFileAsync = promisify(execFile);

export interface Sidecar {
  /** "upstream v2.3.0" or "ours". */
  readonly label: string;
  readonly command: string;
  /** Arguments before the sidecar's own (tsx's for ours). */
  readonly leadingArgs: readonly string[];
}

const BUILD_SCRIPT = join(repoRoot, 'test', 'infra', 'build-components.sh');
const RELEASE_VERSION = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/** The upstream version the project is pinned to: `upstream_version` in build-components.sh. */
export function pinnedUpstreamVersion(): string {
  const m = /^upstream_version=(\S+)$/m.exec(readFileSync(BUILD_SCRIPT, 'utf8'));
  if (!m) throw new Error(`${BUILD_SCRIPT} has no upstream_version= line`);
  return m[1]!;
}

export function upstreamBinaryPath(version: string): string {
  return join(cacheDir(), 'bin', `csi-resizer-upstream-${version}`);
}

/**
 * Upstream's binary at `version`, built first when the cache lacks it (go install from the module
 * proxy: minutes the first time). The build script also makes sure the cluster's components exist.
 */
export async function upstreamSidecar(version: string, progress: (line: string) => void = () => {}): Promise<Sidecar> {
  if (!RELEASE_VERSION.test(version)) throw new Error(`${JSON.stringify(version)} is not a release version (vMAJOR.MINOR.PATCH)`);
  const bin = upstreamBinaryPath(version);
  if (!existsSync(bin)) {
    progress(`building upstream csi-resizer ${version} (${BUILD_SCRIPT} --with-upstream=${version}; minutes the first time)`);
    try {
      await execFileAsync('bash', [BUILD_SCRIPT, `--with-upstream=${version}`], { cwd: repoRoot, maxBuffer: 64 << 20, timeout: 3_600_000 });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`building upstream csi-resizer ${version} failed:\n${(e.stderr ?? e.message).trim().split('\n').slice(-15).join('\n')}`);
    }
    if (!existsSync(bin)) throw new Error(`${BUILD_SCRIPT} --with-upstream=${version} did not produce ${bin}`);
  }
  return { label: `upstream ${version}`, command: bin, leadingArgs: [] };
}

export function oursSidecar(): Sidecar {
  return { label: 'ours', command: process.execPath, leadingArgs: ['--import', 'tsx', MAIN_TS] };
}

/**
 * The environment both run in: the test's, without what would hand either a cluster (in-cluster
 * variables, KUBECONFIG) or change a runtime's own behaviour.
 */
export function sidecarEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBECONFIG', 'POD_NAMESPACE', 'NODE_NAME', 'NODE_OPTIONS', 'GOGC', 'GOMAXPROCS']) {
    delete env[name];
  }
  return env;
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the sidecar to its end (it is killed after timeoutMs) and returns its exit code and output. */
export async function runToEnd(sidecar: Sidecar, args: readonly string[], timeoutMs = 30_000): Promise<RunResult> {
  try {
    const { stdout, stderr } = await execFileAsync(sidecar.command, [...sidecar.leadingArgs, ...args], {
      cwd: repoRoot,
      env: sidecarEnv(),
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; killed?: boolean; stdout?: string; stderr?: string; message: string };
    if (e.killed) throw new Error(`${sidecar.label} ${args.join(' ')} did not end within ${timeoutMs}ms`);
    if (typeof e.code !== 'number') throw new Error(`${sidecar.label} could not be run: ${e.message}`, { cause: err });
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
