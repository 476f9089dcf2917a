// kubectl on the node's host with the node's admin kubeconfig: for what the API clients do not
// do well here (exec into a pod, plain-text answers through the API server's proxy).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NodeEnv } from './node-session.js';

const runFile = promisify(execFile);

export async function kubectl(env: Pick<NodeEnv, 'kubectl' | 'kubeconfig'>, ...args: string[]): Promise<string> {
  const { stdout } = await runFile(env.kubectl, ['--kubeconfig', env.kubeconfig, ...args], { maxBuffer: 16 << 20, timeout: 120_000 });
  return stdout;
}
