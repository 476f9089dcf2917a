// The image of `npm run image` as the tests use it: built into a temp directory by the real script,
// read back as an OCI layout (digests checked), unpacked by umoci into a runtime bundle, and run by
// runc as the image's own user with the host network (loopback only here), the way a kubelet runs
// it minus the pod sandbox.
//
// Why runc and not podman: podman 4.3 (Debian 12) asks the runtime to raise RLIMIT_NOFILE and
// RLIMIT_NPROC, and this sandbox has no CAP_SYS_RESOURCE, so every `podman run` fails with "crun:
// setrlimit RLIMIT_NPROC: Operation not permitted" (with runc: "error setting rlimits for ready
// process"), whatever --ulimit says. crun 1.8 refuses the hybrid cgroup layout here. Plain runc
// with our own config.json (which only lowers RLIMIT_NOFILE) works.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../cluster/components.js';

const exec = promisify(execFile);

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string; variant?: string };
  annotations?: Record<string, string>;
}

export interface ImageConfig {
  architecture: string;
  os: string;
  config: { User: string; Env: string[]; Entrypoint: string[]; WorkingDir: string; Labels: Record<string, string> };
  rootfs: { diff_ids: string[] };
}

export interface OciImage {
  readonly dir: string;
  readonly tag: string;
  /** The manifests of the image index, one per architecture. */
  readonly manifests: Descriptor[];
  blob<T>(digest: string): T;
  config(arch: string): ImageConfig;
  /** Sum of the compressed layer sizes of one architecture. */
  compressedBytes(arch: string): number;
}

export async function buildImage(outDir: string, arches: readonly string[]): Promise<{ image: OciImage; output: string }> {
  const { stdout, stderr } = await exec('bash', [join(repoRoot, 'scripts', 'image.sh'), '--out', outDir, '--arch', arches.join(',')], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
    timeout: 900_000,
  });
  return { image: readImage(outDir), output: stdout + stderr };
}

export function readImage(dir: string): OciImage {
  const blobPath = (digest: string) => join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
  const blob = <T>(digest: string): T => JSON.parse(readFileSync(blobPath(digest), 'utf8')) as T;
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  const top = index.manifests.find((m) => m.mediaType === 'application/vnd.oci.image.index.v1+json');
  if (!top) throw new Error(`${dir}/index.json names no image index`);
  const tag = top.annotations?.['org.opencontainers.image.ref.name'] ?? '';
  const manifests = blob<{ manifests: Descriptor[] }>(top.digest).manifests;
  const manifestOf = (arch: string) => {
    const m = manifests.find((d) => d.platform?.architecture === arch);
    if (!m) throw new Error(`no ${arch} manifest in the image index`);
    return blob<{ config: Descriptor; layers: Descriptor[] }>(m.digest);
  };
  return {
    dir,
    tag,
    manifests,
    blob,
    config: (arch) => blob<ImageConfig>(manifestOf(arch).config.digest),
    compressedBytes: (arch) => manifestOf(arch).layers.reduce((n, l) => n + l.size, 0),
  };
}

/** Every blob's sha256 is its name. Returns the number of blobs checked. */
export function verifyBlobs(dir: string): number {
  const blobs = join(dir, 'blobs', 'sha256');
  const names = readdirSync(blobs);
  for (const name of names) {
    const actual = createHash('sha256').update(readFileSync(join(blobs, name))).digest('hex');
    if (actual !== name) throw new Error(`blob ${name} has sha256 ${actual}`);
  }
  return names.length;
}

/** umoci unpacks the `<tag>-<arch>` manifest into bundleDir (rootfs/ and a config.json). */
export async function unpack(image: OciImage, arch: string, bundleDir: string): Promise<void> {
  await exec('umoci', ['unpack', '--image', `${image.dir}:${image.tag}-${arch}`, bundleDir], { maxBuffer: 16 << 20, timeout: 300_000 });
}

export interface RunOptions {
  /** Appended to the image's entrypoint. */
  args: readonly string[];
  /** Replaces the entrypoint (e.g. qemu in front of it); args still follow. */
  entrypoint?: readonly string[];
  /** Read-only bind mounts, host path → container path. */
  binds?: ReadonlyArray<{ host: string; container: string }>;
  hostname?: string;
}

/**
 * Rewrites the bundle's config.json (umoci's, derived from the image config: user, env, cwd,
 * entrypoint) for this run: no terminal, the host network namespace, a read-only root, no
 * capabilities, the given binds and arguments.
 */
export function configureBundle(bundleDir: string, opts: RunOptions): void {
  const path = join(bundleDir, 'config.json');
  // umoci's original is kept beside it, so that each run starts from the image's own settings.
  const original = join(bundleDir, 'config.umoci.json');
  if (!existsSync(original)) copyFileSync(path, original);
  const spec = JSON.parse(readFileSync(original, 'utf8')) as {
    process: { terminal: boolean; args: string[]; capabilities?: unknown };
    root: { path: string; readonly?: boolean };
    hostname?: string;
    mounts: Array<{ destination: string; type: string; source: string; options: string[] }>;
    linux: { namespaces: Array<{ type: string }> };
  };
  spec.process.terminal = false;
  spec.process.args = [...(opts.entrypoint ?? spec.process.args), ...opts.args];
  const none: string[] = [];
  spec.process.capabilities = { bounding: none, effective: none, permitted: none, inheritable: none, ambient: none };
  spec.root.readonly = true;
  spec.hostname = opts.hostname ?? 'csi-resizer';
  spec.linux.namespaces = spec.linux.namespaces.filter((ns) => ns.type !== 'network');
  for (const bind of opts.binds ?? []) {
    spec.mounts.push({ destination: bind.container, type: 'bind', source: bind.host, options: ['rbind', 'ro', 'nosuid', 'nodev'] });
  }
  writeFileSync(path, JSON.stringify(spec, null, 2));
}

let containerSeq = 0;

/** `runc run` in the foreground: it forwards the signals it gets to the container's PID 1. */
export class Container {
  readonly id = `csi-resizer-test-${process.pid}-${++containerSeq}`;
  readonly child: ChildProcess;
  readonly startedAt = performance.now();
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private done = false;

  constructor(readonly bundleDir: string) {
    this.child = spawn('runc', ['run', '--bundle', bundleDir, this.id], { stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      this[stream] += chunk.toString('utf8');
      for (const w of this.waiters) w();
    };
    this.child.stdout!.on('data', onData('stdout'));
    this.child.stderr!.on('data', onData('stderr'));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.done = true;
        for (const w of this.waiters) w();
        resolve({ code, signal });
      });
    });
  }

  /** Resolves with ms since start when a stderr line matches; rejects on exit or timeout. */
  waitForLog(re: RegExp, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.stderr.split('\n').some((l) => re.test(l))) return finish(() => resolve(performance.now() - this.startedAt));
        if (this.done) return finish(() => reject(new Error(`container exited before logging ${re}:\n${this.tail()}`)));
        return undefined;
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`no log line ${re} within ${timeoutMs}ms:\n${this.tail()}`))), timeoutMs);
      const finish = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Signals runc (by pid), which passes the signal on to the container's process. */
  signal(signal: NodeJS.Signals): void {
    if (!this.done) this.child.kill(signal);
  }

  /** Kills and deletes the container whatever state it is in. For t.after(). */
  async destroy(): Promise<void> {
    if (!this.done) {
      await exec('runc', ['kill', this.id, 'KILL']).catch(() => undefined);
      this.child.kill('SIGKILL');
      await this.exited;
    }
    await exec('runc', ['delete', '--force', this.id]).catch(() => undefined);
  }

  tail(lines = 40): string {
    return [...this.stdout.split('\n'), ...this.stderr.split('\n')].slice(-lines).join('\n');
  }
}
