// The operator-kit tests' tools: kustomize, promtool and the Prometheus server, installed into the cache by
// test/infra/build-kit-tools.sh (a no-op when both are cached). A missing tool is an error, never
// a skipped test: a fresh machine without apt or the Go module proxy fails here, loudly.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseEnvFile, repoRoot } from '../cluster/components.js';

const execFileAsync = promisify(execFile);

export interface KitTools {
  readonly kustomizeBin: string;
  readonly promtoolBin: string;
  /** The Prometheus server of the same Debian package (the auto-grow Prometheus source's tests). */
  readonly prometheusBin: string;
}

let pending: Promise<KitTools> | undefined;

export function kitTools(): Promise<KitTools> {
  return (pending ??= install());
}

async function install(): Promise<KitTools> {
  const script = join(repoRoot, 'test', 'infra', 'build-kit-tools.sh');
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('bash', [script], { cwd: repoRoot, maxBuffer: 16 << 20, timeout: 900_000 }));
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${script} failed: kustomize and promtool are required for these tests\n${e.stderr ?? e.message}`);
  }
  const binDir = stdout.trim().split('\n').at(-1)!;
  const vars = parseEnvFile(readFileSync(join(binDir, 'kit-tools.env'), 'utf8'));
  const need = (key: string) => {
    const value = vars.get(key);
    if (!value) throw new Error(`${join(binDir, 'kit-tools.env')} has no ${key}`);
    return value;
  };
  return { kustomizeBin: need('KUSTOMIZE_BIN'), promtoolBin: need('PROMTOOL_BIN'), prometheusBin: need('PROMETHEUS_BIN') };
}

/** Runs a tool; on failure the error carries its output. */
export async function runTool(bin: string, args: string[], cwd = repoRoot): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(bin, args, { cwd, maxBuffer: 64 << 20, timeout: 120_000 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}
