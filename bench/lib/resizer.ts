// Starting one resizer implementation (ours: compiled JS under node; upstream: the Go binary) with
// the shared flag set, and reading its CPU time and memory from /proc (never from the process
// itself, so both are measured the same way).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnLogged, type Managed } from '../../test/cluster/process.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';

export type Impl = 'ours' | 'upstream';
export const IMPLS: readonly Impl[] = ['ours', 'upstream'];

/**
 * The environment a process gets in its pod, for the bench's sidecars: the machine's, without the
 * variables that change a runtime's own behaviour and that no pod of ours sets (node's
 * NODE_EXTRA_CA_CERTS makes every TLS context parse that bundle;
 * NODE_OPTIONS; Go's GOGC, GOMAXPROCS, GODEBUG, GOMEMLIMIT), then `extra`.
 */
export function podEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !RUNTIME_SPECIFIC_ENV.test(name))), ...extra };
}
const RUNTIME_SPECIFIC_ENV =
  /^(NODE_(EXTRA_CA_CERTS|OPTIONS|COMPILE_CACHE|DEBUG|DEBUG_NATIVE)|UV_THREADPOOL_SIZE|GOGC|GOMAXPROCS|GODEBUG|GOMEMLIMIT|GOTRACEBACK)$/;

/** A sidecar's pod environment: the same for both (the image sets no runtime variables). */
export function sidecarEnv(_impl: Impl, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return podEnv(extra);
}

/** The order of the implementations for the i-th pair of samples or starts: ABBA, so neither always goes first. */
export function pairOrder(i: number): readonly Impl[] {
  return i % 2 === 0 ? IMPLS : [...IMPLS].reverse();
}

export interface ResizerFlags {
  workers: number;
  qps: number;
  burst: number;
  timeout: string;
  handleVolumeInUseError: boolean;
  /** --leader-election (false when unset). */
  leaderElection?: boolean;
  /** Appended after the common flags. */
  extraArgs?: readonly string[];
  /** klog verbosity; 1 when unset. */
  verbosity?: number;
}

export interface LaunchOptions {
  /**
   * Run it in its own UTS namespace with this hostname (`unshare --uts`): upstream takes its
   * leader-election identity from the hostname, so two replicas on one machine need two names.
   */
  hostname?: string;
  env?: NodeJS.ProcessEnv;
}

export interface ResizerTargets {
  kubeconfig: string;
  csiAddress: string;
  oursEntry: string;
  /** Extra node arguments for ours only (e.g. --cpu-prof); empty in a comparing run. */
  oursNodeArgs?: readonly string[];
  upstreamBin: string;
  logDir: string;
}

export interface ProcSample {
  /** utime + stime, seconds. */
  cpuSeconds: number;
  /** Of which in the kernel (stime). */
  sysSeconds: number;
  rssKiB: number;
  /** Of which anonymous memory (heaps, buffers) and file-backed pages (the binary's and libraries' code). */
  rssAnonKiB: number;
  rssFileKiB: number;
  hwmKiB: number;
}

/** The flags both implementations get, in the same order. */
export function commonArgs(t: ResizerTargets, f: ResizerFlags): string[] {
  return [
    `--kubeconfig=${t.kubeconfig}`,
    `--csi-address=${t.csiAddress}`,
    // As deployed (deploy/kubernetes/deployment.yaml serves metrics and health on --http-endpoint),
    // so both sides pay for their metrics server and runtime collectors; port 0 lets several run.
    '--http-endpoint=127.0.0.1:0',
    `--leader-election=${f.leaderElection ?? false}`,
    `--workers=${f.workers}`,
    `--kube-api-qps=${f.qps}`,
    `--kube-api-burst=${f.burst}`,
    `--timeout=${f.timeout}`,
    `--handle-volume-inuse-error=${f.handleVolumeInUseError}`,
    `--v=${f.verbosity ?? 1}`,
    ...(f.extraArgs ?? []),
  ];
}

let launches = 0;

export interface RunningResizer {
  readonly impl: Impl;
  readonly proc: Managed;
  /** performance.now() just before spawn. */
  readonly spawnedAt: number;
  sample(): ProcSample;
  stop(): Promise<void>;
}

export function startResizer(impl: Impl, t: ResizerTargets, f: ResizerFlags, label: string, launch: LaunchOptions = {}): RunningResizer {
  launches += 1;
  const args = commonArgs(t, f);
  const logPath = join(t.logDir, `${String(launches).padStart(3, '0')}-${impl}-${label}.log`);
  const spawnedAt = performance.now();
  // Ours from its TypeScript sources runs under tsx; the compiled build runs as the image runs it
  // (its entry point's node flags).
  const [command, ...argv] =
    impl === 'ours'
      ? [process.execPath, ...NODE_FLAGS, ...(t.oursNodeArgs ?? []), ...(t.oursEntry.endsWith('.ts') ? ['--import', 'tsx'] : []), t.oursEntry, ...args]
      : [t.upstreamBin, ...args];
  // unshare execs sh, which execs the resizer: the pid stays the resizer's.
  const wrapped =
    launch.hostname === undefined
      ? { command: command!, args: argv }
      : { command: 'unshare', args: ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', launch.hostname, command!, ...argv] };
  const env = sidecarEnv(impl, launch.env);
  const proc = spawnLogged({ name: `csi-resizer (${impl})`, ...wrapped, logPath, env });
  return {
    impl,
    proc,
    spawnedAt,
    sample: () => readProc(proc.pid),
    stop: () => proc.stop(15_000),
  };
}

const CLK_TCK = 100; // getconf CLK_TCK on Linux (USER_HZ)

export function readProc(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return {
    cpuSeconds: (utime + stime) / CLK_TCK,
    sysSeconds: stime / CLK_TCK,
    rssKiB: kib('VmRSS'),
    rssAnonKiB: kib('RssAnon'),
    rssFileKiB: kib('RssFile'),
    hwmKiB: kib('VmHWM'),
  };
}
