// Runs the Go oracle (test/oracle/main.go): builds it into the cache on first use (Go and the
// module proxy are already needed by the test setup) and asks it a batch of questions at once.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type OracleOp = 'quantity' | 'duration' | 'float' | 'int' | 'bool' | 'quote' | 'flag' | 'printable';

export interface OracleRequest {
  op: OracleOp;
  in: string;
  /** For op 'flag': the flag's type (float, int, bool, duration, string). */
  kind?: string;
}

export interface OracleAnswer {
  err?: string;
  out?: string;
  value?: string;
  format?: string;
  range?: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));

/** The oracle binary's path, building it if this version is not cached yet. */
export function oracleBinary(): string {
  const stdout = execFileSync('bash', [join(here, 'build-oracle.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const path = stdout.trim().split('\n').pop() ?? '';
  if (!existsSync(path)) throw new Error(`the oracle build printed no binary path (got ${JSON.stringify(path)})`);
  return path;
}

/** Sends every request, returns the answers in the same order. */
export async function askOracle(binary: string, requests: readonly OracleRequest[]): Promise<OracleAnswer[]> {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  child.stdin.end(requests.map((r) => `${JSON.stringify(r)}\n`).join(''));
  const code = await exited;
  if (code !== 0) throw new Error(`oracle exited with ${code}: ${Buffer.concat(err).toString()}`);
  const lines = Buffer.concat(out)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
  if (lines.length !== requests.length) throw new Error(`oracle answered ${lines.length} of ${requests.length} requests`);
  return lines.map((l) => JSON.parse(l) as OracleAnswer);
}
