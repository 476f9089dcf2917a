// Where the official CSI v1.13.0 csi.proto lives on this machine. The Go build of
// the test components downloads the spec module, so it is found (in order) through
// $CSI_SPEC_DIR, the components manifest (<cache>/bin/components.env, CSI_SPEC_DIR=...), or the Go
// module cache. Absent means the machine is not set up: callers fail loudly rather than skip.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const CSI_SPEC_MODULE = 'github.com/container-storage-interface/spec@v1.13.0';

export function componentsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['CSI_RESIZER_CACHE']) return env['CSI_RESIZER_CACHE'];
  return join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'csi-resizer');
}

function specDirFromManifest(env: NodeJS.ProcessEnv): string | undefined {
  const manifest = join(componentsCacheDir(env), 'bin', 'components.env');
  if (!existsSync(manifest)) return undefined;
  const line = readFileSync(manifest, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('CSI_SPEC_DIR='));
  const dir = line?.slice('CSI_SPEC_DIR='.length).trim();
  return dir || undefined;
}

function specDirFromGo(): string | undefined {
  try {
    const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', timeout: 30_000 }).trim();
    return modCache ? join(modCache, CSI_SPEC_MODULE) : undefined;
  } catch {
    return undefined;
  }
}

/** The official csi.proto path; throws with every place looked at when it is missing. */
export function officialCsiProtoPath(env: NodeJS.ProcessEnv = process.env): string {
  const tried: string[] = [];
  for (const dir of [env['CSI_SPEC_DIR'], specDirFromManifest(env), specDirFromGo()]) {
    if (!dir) continue;
    const path = join(dir, 'csi.proto');
    if (existsSync(path)) return path;
    tried.push(path);
  }
  throw new Error(
    `official csi.proto (${CSI_SPEC_MODULE}) not found; looked at: ${tried.join(', ') || 'nothing configured'}. ` +
      'Run scripts/setup.sh (it downloads the spec module while building the test components) or set CSI_SPEC_DIR.',
  );
}
