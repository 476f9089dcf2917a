// The version `--version` and the "Version" log line print: package.json's version and the commit
// it was built from, in the shape of upstream's `git describe` stamp (v2.2.1-0-g<sha>[-dirty]):
// `0.1.0-g<12 hex>`, `-dirty` when tracked files differed from that commit. dist/ carries the
// commit in build-info.json, written by scripts/build.sh; a checkout (src/main.ts under tsx) asks
// git at run time. When neither knows (a copy without .git or stamp), the bare version.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface SourceCommit {
  /** Full hex object name. */
  commit: string;
  dirty: boolean;
}

/** The stamp scripts/build.sh writes beside dist/main.js. */
export const BUILD_INFO_FILE = 'build-info.json';

const COMMIT_RE = /^[0-9a-f]{7,64}$/;

export function formatVersion(packageVersion: string, source: SourceCommit | undefined): string {
  if (!source) return packageVersion;
  return `${packageVersion}-g${source.commit.slice(0, 12)}${source.dirty ? '-dirty' : ''}`;
}

/** `git describe --always --dirty --abbrev=40 --exclude=*` output: "<sha>" or "<sha>-dirty". */
export function parseDescribe(text: string): SourceCommit | undefined {
  const trimmed = text.trim();
  const dirty = trimmed.endsWith('-dirty');
  const commit = dirty ? trimmed.slice(0, -'-dirty'.length) : trimmed;
  return COMMIT_RE.test(commit) ? { commit, dirty } : undefined;
}

/** build-info.json's content, or undefined when it names no valid commit. */
export function parseBuildInfo(text: string): SourceCommit | undefined {
  try {
    const info = JSON.parse(text) as { commit?: unknown; dirty?: unknown };
    if (typeof info.commit !== 'string' || !COMMIT_RE.test(info.commit)) return undefined;
    return { commit: info.commit, dirty: info.dirty === true };
  } catch {
    return undefined;
  }
}

function fromGit(root: string): SourceCommit | undefined {
  // Only our own checkout: a copy vendored inside some other repository must not report its commit.
  if (!existsSync(`${root}/.git`)) return undefined;
  try {
    // Loaded here: a build never asks git, and loading node:child_process costs every start-up
    // time (docs/performance.md, "Start-up costs behind code choices").
    const { execFileSync } = process.getBuiltinModule('node:child_process');
    const out = execFileSync('git', ['describe', '--always', '--dirty', '--abbrev=40', '--exclude=*'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5_000,
    });
    return parseDescribe(out);
  } catch {
    return undefined; // no git binary, not a repository after all, or too slow
  }
}

/**
 * The version of the program whose entry point is `mainUrl` (src/main.ts or dist/main.js, both one
 * level below package.json).
 */
export function readVersion(mainUrl: string): string {
  let packageVersion = 'unknown';
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', mainUrl), 'utf8')) as { version?: unknown };
    if (typeof pkg.version === 'string') packageVersion = pkg.version;
  } catch {
    // keep "unknown"
  }
  const stamp = new URL(`./${BUILD_INFO_FILE}`, mainUrl);
  if (existsSync(stamp)) return formatVersion(packageVersion, parseBuildInfo(readFileSync(stamp, 'utf8')));
  return formatVersion(packageVersion, fromGit(fileURLToPath(new URL('..', mainUrl)).replace(/\/$/, '')));
}
