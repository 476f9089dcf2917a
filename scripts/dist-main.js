// dist/main.js, written by scripts/build.sh beside the bundle. It turns on V8's code cache for
// the code loaded after it where the runtime has one (module.enableCompileCache, Node 22.1+),
// then runs the resizer: one bundled file, resizer.js.
// Builtins through process.getBuiltinModule, not ESM imports: an ESM import of node:fs builds a
// namespace of every export, and its `promises` getter loads fs/promises, readline and the REPL's
// history module, which nothing here uses.
const module = process.getBuiltinModule('node:module');
const { accessSync, constants, readdirSync, statSync } = process.getBuiltinModule('node:fs');
const { tmpdir } = process.getBuiltinModule('node:os');
const { fileURLToPath } = process.getBuiltinModule('node:url');

// The cache the build made beside the bundle (scripts/compile-cache.sh), read where the root
// filesystem is read-only (every pod of our manifests): a start then reads the bundle's compiled
// code instead of compiling it. Portable: its entries are keyed by their path relative to it, so it
// serves dist/ wherever dist/ is. Read-only, only when it holds a cache of this runtime's version
// and architecture (its directories are named <version>-<arch>-<V8 flag hash>): Node would
// otherwise try to create one there and fail. Where it is writable (a build, a checkout's dist/),
// Node adds to it.
const shipped = fileURLToPath(new URL('./compile-cache', import.meta.url));
function shippedCacheFits() {
  try {
    const prefix = `${process.version}-${process.arch}-`;
    if (readdirSync(shipped).some((name) => name.startsWith(prefix))) return true;
    accessSync(shipped, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// Else only into a temp directory that exists and is writable: on a read-only root filesystem the
// cache is simply off. (Node 24.22 was seen to spin forever in enableCompileCache when the
// directory could not be created under /proc, so it is never asked to create the parent.)
function tempCacheUsable() {
  try {
    const dir = tmpdir();
    if (!statSync(dir).isDirectory()) return false;
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

if (typeof module.enableCompileCache === 'function') {
  try {
    if (shippedCacheFits()) module.enableCompileCache({ directory: shipped, portable: true });
    else if (tempCacheUsable()) module.enableCompileCache();
  } catch {
    // The cache is an optimisation only.
  }
}
await import('./resizer.js');
