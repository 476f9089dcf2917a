// dist/main.js, written by scripts/build.sh beside the bundle. It turns on V8's code cache for
// the code loaded after it where the runtime has one (module.enableCompileCache, Node 22.1+),
// then runs the resizer: one bundled file, resizer.js.
import module from 'node:module';

// node:fs and node:os through require, not ESM imports: an ESM import of a builtin builds its
// facade, which reads every export, and node:fs's `ReadStream` getter then loads its file streams
// (a few ms at every start for modules the resizer never uses).
const require = module.createRequire(import.meta.url);
const { accessSync, constants, statSync } = require('node:fs');
const { tmpdir } = require('node:os');

// Only into a temp directory that exists and is writable: on a read-only root filesystem the
// cache is simply off. (Node 24.22 was seen to spin forever in enableCompileCache when the
// directory could not be created under /proc, so it is never asked to create the parent.)
function compileCacheUsable() {
  if (typeof module.enableCompileCache !== 'function') return false;
  try {
    const dir = tmpdir();
    if (!statSync(dir).isDirectory()) return false;
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

if (compileCacheUsable()) {
  try {
    module.enableCompileCache();
  } catch {
    // The cache is an optimisation only.
  }
}
await import('./resizer.js');
