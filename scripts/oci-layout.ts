// Writes an OCI image layout (image-spec v1.1) from layer tarballs: gzipped layer blobs, one image
// config and manifest per architecture, an image index over them, and index.json naming the index
// `<tag>` and each manifest `<tag>-<arch>` (for tools such as umoci that unpack a single manifest).
// Called by scripts/image.sh; everything it writes depends only on its inputs (gzip has no name
// or time, JSON keys come in a fixed order, `created` is the given epoch).
//
//   node --import tsx scripts/oci-layout.ts --out DIR --name N --tag T --created EPOCH
//        --node-version V  amd64=base.tar,app.tar  arm64=base.tar,app.tar
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import { NODE_FLAGS } from './node-flags.js';

const MediaType = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string; variant?: string };
  annotations?: Record<string, string>;
}

interface Options {
  out: string;
  name: string;
  tag: string;
  createdEpoch: number;
  nodeVersion: string;
  images: { arch: string; tars: string[] }[];
}

function parseArgs(argv: string[]): Options {
  const flags = new Map<string, string>();
  const images: Options['images'] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      flags.set(arg.slice(2), value);
    } else {
      const [arch, list] = arg.split('=', 2);
      if (!arch || !list) throw new Error(`expected <arch>=<layer.tar>[,<layer.tar>...], got ${arg}`);
      images.push({ arch, tars: list.split(',') });
    }
  }
  const need = (key: string): string => {
    const value = flags.get(key);
    if (value === undefined) throw new Error(`--${key} is required`);
    return value;
  };
  const createdEpoch = Number(need('created'));
  if (!Number.isInteger(createdEpoch) || createdEpoch < 0) throw new Error(`--created must be seconds since the epoch, got ${need('created')}`);
  if (images.length === 0) throw new Error('no <arch>=<layers> given');
  return { out: need('out'), name: need('name'), tag: need('tag'), createdEpoch, nodeVersion: need('node-version'), images };
}

class Layout {
  constructor(readonly dir: string) {
    mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
    writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  }

  writeJson(mediaType: string, value: unknown): Descriptor {
    const bytes = Buffer.from(JSON.stringify(value));
    const hex = createHash('sha256').update(bytes).digest('hex');
    writeFileSync(join(this.dir, 'blobs', 'sha256', hex), bytes);
    return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
  }

  /** Gzips a tar into a blob; returns its descriptor and the uncompressed digest (the diff_id). */
  async writeLayer(tarPath: string): Promise<{ descriptor: Descriptor; diffId: string }> {
    const tarHash = createHash('sha256');
    const gzHash = createHash('sha256');
    let size = 0;
    const tmp = join(this.dir, 'blobs', 'sha256', `.partial-${process.pid}`);
    await pipeline(
      createReadStream(tarPath),
      tap((chunk) => tarHash.update(chunk)),
      createGzip({ level: 6 }),
      tap((chunk) => {
        gzHash.update(chunk);
        size += chunk.length;
      }),
      createWriteStream(tmp),
    );
    const hex = gzHash.digest('hex');
    renameSync(tmp, join(this.dir, 'blobs', 'sha256', hex));
    return { descriptor: { mediaType: MediaType.layer, digest: `sha256:${hex}`, size }, diffId: `sha256:${tarHash.digest('hex')}` };
  }
}

function tap(onChunk: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onChunk(chunk);
      done(null, chunk);
    },
  });
}

function platformOf(arch: string): NonNullable<Descriptor['platform']> {
  switch (arch) {
    case 'amd64':
      return { architecture: 'amd64', os: 'linux' };
    case 'arm64':
      return { architecture: 'arm64', os: 'linux', variant: 'v8' };
    default:
      throw new Error(`unsupported architecture ${arch} (amd64, arm64)`);
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const layout = new Layout(opts.out);
  const created = new Date(opts.createdEpoch * 1000).toISOString().replace('.000Z', 'Z');
  const labels = {
    'org.opencontainers.image.title': opts.name,
    'org.opencontainers.image.version': opts.tag,
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.created': created,
    'io.github.csi-resizer.node-version': opts.nodeVersion,
  };
  // The same tar (the app layer) is compressed once and shared by every architecture.
  const layers = new Map<string, Promise<{ descriptor: Descriptor; diffId: string }>>();
  const layerOf = (tar: string) => {
    let layer = layers.get(tar);
    if (!layer) layers.set(tar, (layer = layout.writeLayer(tar)));
    return layer;
  };

  const manifests: Descriptor[] = [];
  for (const image of opts.images) {
    const platform = platformOf(image.arch);
    const imageLayers = [];
    for (const tar of image.tars) imageLayers.push(await layerOf(tar));
    const config = layout.writeJson(MediaType.config, {
      created,
      architecture: platform.architecture,
      ...(platform.variant ? { variant: platform.variant } : {}),
      os: platform.os,
      config: {
        User: '0:0',
        Env: ['PATH=/usr/local/bin', 'NODE_ENV=production'],
        Entrypoint: ['/usr/local/bin/node', ...NODE_FLAGS, '/app/dist/main.js'],
        WorkingDir: '/app',
        Labels: labels,
        StopSignal: 'SIGTERM',
      },
      rootfs: { type: 'layers', diff_ids: imageLayers.map((l) => l.diffId) },
      history: [
        { created, created_by: `scripts/image.sh: Node.js ${opts.nodeVersion}, its shared libraries, CA certificates, passwd/group` },
        { created, created_by: "scripts/image.sh: /app (package.json, dist/, the bundled dependencies' license files)" },
      ].slice(0, imageLayers.length),
    });
    const manifest = layout.writeJson(MediaType.manifest, {
      schemaVersion: 2,
      mediaType: MediaType.manifest,
      config,
      layers: imageLayers.map((l) => l.descriptor),
      annotations: { 'org.opencontainers.image.created': created, 'org.opencontainers.image.version': opts.tag },
    });
    manifests.push({ ...manifest, platform });
  }

  const index = layout.writeJson(MediaType.index, {
    schemaVersion: 2,
    mediaType: MediaType.index,
    manifests,
    annotations: { 'org.opencontainers.image.created': created, 'org.opencontainers.image.version': opts.tag },
  });
  const refName = 'org.opencontainers.image.ref.name';
  writeFileSync(
    join(opts.out, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.index,
      manifests: [
        { ...index, annotations: { [refName]: opts.tag } },
        ...manifests.map((m) => ({ ...m, annotations: { [refName]: `${opts.tag}-${m.platform!.architecture}` } })),
      ],
    }),
  );
  process.stdout.write(`${opts.out}: ${opts.name}:${opts.tag} index ${index.digest}\n`);
  for (const m of manifests) process.stdout.write(`  ${m.platform!.architecture}: manifest ${m.digest}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`oci-layout: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
