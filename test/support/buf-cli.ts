// The buf CLI from the @bufbuild/buf package, run the way `npm run gen:proto` runs it: with
// node_modules/.bin first on PATH, so `local: protoc-gen-es` in a template finds the plugin.
import { execFileSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { repoRoot } from '../cluster/components.js';

const bin = join(repoRoot, 'node_modules', '.bin');

/** Runs buf with `args` in the repository root; throws with buf's output when it fails. */
export function buf(args: readonly string[]): string {
  return execFileSync(join(bin, 'buf'), args, {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` },
  });
}
