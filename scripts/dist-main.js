// dist/main.js, written by scripts/build.sh beside the bundle. It turns on V8's code cache for
// the code loaded after it where the runtime has one (module.enableCompileCache, Node 22.1+),
// then runs the resizer: one bundled file, resizer.js.
// Builtins through process.getBuiltinModule, not ESM imports: an ESM import of node:fs builds a
// namespace of every export, and its `promises` getter loads fs/promises, readline and the REPL's
// history module, which nothing here uses.
const module = process.getBuiltinModule('node:module');
const { accessSync, constants, statSync } = process.getBuiltinModule('node:fs');
const { tmpdir } = process.getBuiltinModule('node:os');
const { fileURLToPath } = process.getBuiltinModule('node:url');

function isDirectory(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

// The cache the build made beside the bundle (scripts/build.sh), read where the root filesystem is
// read-only: a start then reads the bundle's compiled code instead of compiling it. Portable: its
// entries are keyed by their path relative to it, so it serves dist/ wherever dist/ is.
const shipped = fileURLToPath(new URL('./compile-cache', import.meta.url));

// Else only into a temp directory that exists and is writable: on a read-only root filesystem the
// cache is simply off. (Node 24.22 was seen to spin forever in enableCompileCache when the
// directory could not be created under /proc, so it is never asked to create the parent.)
function tempCacheUsable() {
  try {
    const dir = tmpdir();
    if (!isDirectory(dir)) return false;
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

if (typeof module.enableCompileCache === 'function') {
  try {
    if (isDirectory(shipped)) module.enableCompileCache({ directory: shipped, portable: true });
    else if (tempCacheUsable()) module.enableCompileCache();
  } catch {
    // The cache is an optimisation only.
  }
}
await import('./resizer.js');
