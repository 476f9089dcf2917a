// Where the Go-built components live. test/infra/build-components.sh builds them once per version
// into a cache outside the repository and writes bin/components.env; this file reads that manifest.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Components {
  readonly binDir: string;
  readonly etcdBin: string;
  readonly etcdVersion: string;
  readonly kubeApiserverBin: string;
  readonly k8sVersion: string;
  readonly mockDriverBin: string;
  /**
   * The grpc-go CSI driver that fails on purpose (test/infra/components/gofaultdriver); empty when
   * components.env was written by a build script that predates it (see loadGoFaultDriverBin).
   */
  readonly goFaultDriverBin: string;
  /** Empty unless build-components.sh ran with --with-upstream. */
  readonly upstreamResizerBin: string;
  readonly csiSpecDir: string;
  /** csi.proto inside csiSpecDir. */
  readonly csiProtoPath: string;
}

/** The mock driver and the CSI proto only: enough for CSI tests that need no control plane. */
export type DriverComponents = Pick<Components, 'mockDriverBin' | 'csiProtoPath'>;

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['CSI_RESIZER_CACHE']) return env['CSI_RESIZER_CACHE'];
  return join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'csi-resizer');
}

export function componentsEnvPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'bin', 'components.env');
}

/** KEY=VALUE lines; blank lines and # comments are skipped. */
export function parseEnvFile(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

function fromEnvFile(path: string): Components {
  const vars = parseEnvFile(readFileSync(path, 'utf8'));
  const need = (key: string): string => {
    const value = vars.get(key);
    if (!value) throw new Error(`${path} has no ${key}; rerun test/infra/build-components.sh`);
    return value;
  };
  const csiSpecDir = need('CSI_SPEC_DIR');
  const components: Components = {
    binDir: dirname(path),
    etcdBin: need('ETCD_BIN'),
    etcdVersion: need('ETCD_VERSION'),
    kubeApiserverBin: need('KUBE_APISERVER_BIN'),
    k8sVersion: need('K8S_VERSION'),
    mockDriverBin: need('MOCKDRIVER_BIN'),
    goFaultDriverBin: vars.get('GO_FAULT_DRIVER_BIN') ?? '',
    upstreamResizerBin: vars.get('UPSTREAM_RESIZER_BIN') ?? '',
    csiSpecDir,
    csiProtoPath: join(csiSpecDir, 'csi.proto'),
  };
  // The version matrix (scripts/test-matrix.sh) runs the same suite against another API server.
  const apiserverOverride = process.env['CSI_RESIZER_KUBE_APISERVER_BIN'];
  if (apiserverOverride) {
    const version = process.env['CSI_RESIZER_K8S_VERSION'];
    if (!version) throw new Error('CSI_RESIZER_KUBE_APISERVER_BIN is set without CSI_RESIZER_K8S_VERSION');
    Object.assign(components, { kubeApiserverBin: apiserverOverride, k8sVersion: version });
  }
  for (const bin of [components.etcdBin, components.kubeApiserverBin, components.mockDriverBin]) {
    if (!existsSync(bin)) throw new Error(`${bin} (listed in ${path}) is missing; rerun test/infra/build-components.sh`);
  }
  return Object.freeze(components);
}

/** Runs test/infra/build-components.sh (it holds a lock, so concurrent callers wait for one build). */
export async function buildComponents(args: readonly string[] = []): Promise<void> {
  const script = join(repoRoot, 'test', 'infra', 'build-components.sh');
  process.stderr.write(`[cluster] building the components ${componentsEnvPath()} lists with ${script} ${args.join(' ')}\n`);
  const child = execFileAsync('bash', [script, ...args], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  child.child.stderr?.pipe(process.stderr);
  await child;
}

/** Reads components.env, building the components first when it does not exist yet. */
export async function loadComponents(opts: { build?: boolean } = {}): Promise<Components> {
  const path = componentsEnvPath();
  if (!existsSync(path)) {
    if (opts.build === false) throw new Error(`${path} is missing; run bash scripts/setup.sh`);
    await buildComponents();
  }
  return fromEnvFile(path);
}

/**
 * The binary components.env lists under `key`. The cache is shared by every checkout on the
 * machine, so components.env may have been rewritten by a build script without it: then the
 * build runs (it waits for any build in progress and reuses the cached binaries).
 */
async function listedOrBuilt(key: string, buildArgs: readonly string[] = []): Promise<string> {
  const listed = (): string | undefined => {
    const path = componentsEnvPath();
    const bin = existsSync(path) ? parseEnvFile(readFileSync(path, 'utf8')).get(key) : undefined;
    return bin && existsSync(bin) ? bin : undefined;
  };
  const bin = listed();
  if (bin) return bin;
  await buildComponents(buildArgs);
  const built = listed();
  if (!built) throw new Error(`${componentsEnvPath()} lists no ${key} after test/infra/build-components.sh ${buildArgs.join(' ')} ran`);
  return built;
}

/** The grpc-go fault driver (test/infra/components/gofaultdriver). */
export function loadGoFaultDriverBin(): Promise<string> {
  return listedOrBuilt('GO_FAULT_DRIVER_BIN');
}

/** Upstream's csi-resizer, built from the module proxy the first time it is asked for. */
export function loadUpstreamResizerBin(): Promise<string> {
  return listedOrBuilt('UPSTREAM_RESIZER_BIN', ['--with-upstream']);
}

/**
 * The mock driver and csi.proto. Prefers components.env; without it (a build of the other
 * components still running) it falls back to the newest mockdriver-* in the cache and the CSI spec
 * version pinned in test/infra/components/go.mod inside the Go module cache.
 */
export async function loadDriverComponents(): Promise<DriverComponents> {
  const path = componentsEnvPath();
  if (existsSync(path)) {
    const vars = parseEnvFile(readFileSync(path, 'utf8'));
    const bin = vars.get('MOCKDRIVER_BIN');
    const spec = vars.get('CSI_SPEC_DIR');
    if (bin && spec && existsSync(bin)) return { mockDriverBin: bin, csiProtoPath: join(spec, 'csi.proto') };
  }
  const binDir = join(cacheDir(), 'bin');
  const candidates = existsSync(binDir)
    ? readdirSync(binDir)
        .filter((f) => f.startsWith('mockdriver-') && !f.endsWith('.tmp'))
        .map((f) => join(binDir, f))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    : [];
  const gomod = readFileSync(join(repoRoot, 'test', 'infra', 'components', 'go.mod'), 'utf8');
  const specVersion = /github\.com\/container-storage-interface\/spec (v[0-9.]+)/.exec(gomod)?.[1];
  const first = candidates[0];
  if (!first || !specVersion) return loadComponents();
  const { stdout } = await execFileAsync('go', ['env', 'GOMODCACHE']);
  const protoPath = join(stdout.trim(), 'github.com', 'container-storage-interface', `spec@${specVersion}`, 'csi.proto');
  if (!existsSync(protoPath)) return loadComponents();
  return { mockDriverBin: first, csiProtoPath: protoPath };
}
