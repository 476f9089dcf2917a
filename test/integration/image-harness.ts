// The image of `npm run image` as the tests use it: built into a temp directory by the real script,
// read back as an OCI layout (digests checked), unpacked by umoci for inspection, and run by
// podman (pulled from the layout into its storage) as the image's own user with the host network
// (loopback only here), the way a kubelet runs it minus the pod sandbox.
//
// What this sandbox allows: podman 4.3 (Debian 12) asks the runtime to set RLIMIT_NOFILE to
// 1048576 and RLIMIT_NPROC high by default, above the hard limits here, and the sandbox has no
// CAP_SYS_RESOURCE to raise them ("crun: setrlimit RLIMIT_NOFILE: Operation not permitted");
// crun 1.8 then refuses the host's hybrid cgroup layout ("cgroups in hybrid mode not
// supported"). With runc and both limits lowered (--ulimit), podman runs containers.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
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
    const actual = createHash('sha256')
      .update(readFileSync(join(blobs, name)))
      .digest('hex');
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
  /** Environment variables for the container, beside the image's. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Copies one architecture's manifest of the layout into podman's storage under a name of this
 * test process (skopeo: `podman pull oci:<dir>` would name the image after the directory).
 */
export async function pullImage(image: OciImage, arch: string): Promise<string> {
  const name = `localhost/csi-resizer-test-${process.pid}:${image.tag}-${arch}`;
  await exec('skopeo', ['copy', '--quiet', `oci:${image.dir}:${image.tag}-${arch}`, `containers-storage:${name}`], { maxBuffer: 16 << 20, timeout: 300_000 });
  return name;
}

export async function removeImage(name: string): Promise<void> {
  await exec('podman', ['rmi', '--force', name]).catch(() => undefined);
}

// The podman flags of every run: runc with rlimits this sandbox can grant (see the top of this
// file), the host network namespace, a read-only root, no capabilities, no privilege gain.
const PODMAN_RUN = [
  'run',
  '--rm',
  '--runtime',
  'runc',
  '--ulimit',
  'nofile=1024:1024',
  '--ulimit',
  'nproc=1024:1024',
  '--network',
  'host',
  '--read-only',
  '--cap-drop',
  'all',
  '--security-opt',
  'no-new-privileges',
];

let containerSeq = 0;

/** `podman run` in the foreground: it forwards the signals it gets to the container's PID 1. */
export class Container {
  readonly name = `csi-resizer-test-${process.pid}-${++containerSeq}`;
  readonly child: ChildProcess;
  readonly startedAt = performance.now();
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private done = false;

  constructor(imageId: string, opts: RunOptions) {
    const flags = [...PODMAN_RUN, '--name', this.name, '--hostname', opts.hostname ?? 'csi-resizer'];
    for (const bind of opts.binds ?? []) flags.push('--volume', `${bind.host}:${bind.container}:ro`);
    if (opts.entrypoint) flags.push('--entrypoint', JSON.stringify(opts.entrypoint));
    for (const [name, value] of Object.entries(opts.env ?? {})) flags.push('--env', `${name}=${value}`);
    this.child = spawn('podman', [...flags, imageId, ...opts.args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

  /** Signals podman (by pid), which passes the signal on to the container's process. */
  signal(signal: NodeJS.Signals): void {
    if (!this.done) this.child.kill(signal);
  }

  /** Kills and deletes the container whatever state it is in. For t.after(). */
  async destroy(): Promise<void> {
    if (!this.done) {
      await exec('podman', ['kill', '--signal', 'KILL', this.name]).catch(() => undefined);
      this.child.kill('SIGKILL');
      await this.exited;
    }
    await exec('podman', ['rm', '--force', '--ignore', this.name]).catch(() => undefined);
  }

  tail(lines = 40): string {
    return [...this.stdout.split('\n'), ...this.stderr.split('\n')].slice(-lines).join('\n');
  }
}
