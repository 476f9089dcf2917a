// Where the resizer's CPU time goes, from `perf record -e cpu-clock -g` (mem-probe.ts --perf-record
// records each burst; give the variant --perf-basic-prof-only-functions so JavaScript is named).
// perf samples CPU time, not wall time, so a loaded machine does not move time into whatever was
// running when the thread was preempted (as a --cpu-prof profile's wall-clock samples do).
// Each sample is put in two tables:
// - by what ran: the kernel, GC, V8's runtime (C++), V8's builtins, the interpreter (a function
//   not compiled yet: its bytecode handlers), JavaScript by tier (Sparkplug ^, Maglev +, TurboFan *),
//   Node's C++, OpenSSL, libuv, libc, nghttp2; split by thread (main, V8 workers, other);
// - by whose code, on the main thread: the nearest JavaScript frame of the sample's stack, mapped
//   through the bundle's source map to its file (our folder, a dependency, a node: module).
//
//   node --import tsx bench/probes/perf-summary.ts FILE.data... [--map dist/resizer.js.map] [--top 25] [--by package|file|function] [--mapped-only]
// Start-ups: `perf record -a -g -e cpu-clock -F 999 -o FILE.data` around a startup-probe.ts run whose
// NODE_ARGS hold --perf-basic-prof-only-functions, then --mapped-only keeps the resizers' samples.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { parseArgs } from 'node:util';
import { packageOf } from './code-origin.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    map: { type: 'string', default: 'dist/resizer.js.map' },
    top: { type: 'string', default: '25' },
    by: { type: 'string', default: 'package' },
    json: { type: 'boolean', default: false },
    // A system-wide recording (perf record -a): keep the processes that wrote a perf map
    // (/tmp/perf-PID.map), i.e. those started with --perf-basic-prof-only-functions.
    'mapped-only': { type: 'boolean', default: false },
  },
});
if (positionals.length === 0) throw new Error('usage: perf-summary.ts FILE.data... [--map MAP] [--top N] [--by package|file|function]');
const map = new SourceMap(JSON.parse(readFileSync(values.map!, 'utf8')));

interface Frame {
  sym: string;
  dso: string;
}

/** A JavaScript frame's name in a perf map: "JS:<tier marker><name> <script>:<line>:<column>". */
const JS_FRAME = /^JS:([~^+*]?)'?(.*) (\S+):(\d+):(\d+)$/;
const TIERS: Record<string, string> = { '~': 'interpreted', '^': 'Sparkplug', '+': 'Maglev', '*': 'TurboFan', '': 'JS' };

function whatRan(leaf: Frame): string {
  const { sym, dso } = leaf;
  if (dso.includes('kernel')) return 'kernel';
  const js = JS_FRAME.exec(sym);
  if (js) return `JS (${TIERS[js[1]!] ?? js[1]})`;
  if (dso.includes('libc.so') || dso.includes('libm.so') || dso.includes('ld-linux')) return 'libc';
  if (dso.includes('libstdc++')) return 'libstdc++';
  if (/perf-\d+\.map/.test(dso) || dso === '[unknown]' || dso === '') {
    if (sym.startsWith('Builtin:') || sym.startsWith('Builtins_')) return builtinKind(sym.replace(/^Builtin:|^Builtins_/, ''));
    return sym === '[unknown]' || sym === '' ? 'unknown (JIT code without a name)' : `other generated code`;
  }
  if (sym.startsWith('Builtins_')) return builtinKind(sym.slice('Builtins_'.length));
  if (
    /^v8::internal::(Heap|MarkCompact|Scavenger|ScavengerCollector|MinorMarkSweep|ConcurrentMarking|IncrementalMarking|MarkingVisitor|MainMarkingVisitor|Sweeper|GCTracer|EvacuationVerifier|MemoryAllocator|PagedSpace|LargeObjectSpace|NewSpace|SemiSpace|MarkingWorklist|RecordMigratedSlotVisitor|Evacuat|ConcurrentMarkingVisitor|FullEvacuator|YoungGeneration|EphemeronHashTable|WeakObjects|CppHeap|StrongRootsEntry|RootsReferencesExtractor|IterateAndScavenge|ScavengeVisitor|ArrayBufferSweeper|PretenuringHandler|MemoryReducer)/.test(
      sym,
    ) ||
    /^(cppgc|heap::base)::/.test(sym) ||
    /Marking|Scaveng|Evacuat|Sweep|MarkCompact/.test(sym)
  )
    return 'GC';
  if (
    /^v8::internal::(maglev|compiler|turboshaft|baseline|interpreter::BytecodeGenerator|Parser|PreParser|Scanner|Compiler|BackgroundCompileTask|Zone|AstValueFactory|DeclarationScope|Scope)/.test(
      sym,
    )
  )
    return 'V8 compilers and parser';
  if (sym.startsWith('v8::internal::Runtime_') || sym.startsWith('v8::internal::')) return 'V8 runtime (C++)';
  if (sym.startsWith('v8::')) return 'V8 API';
  if (/^(node::|uv_|uv__)/.test(sym)) return sym.startsWith('uv') ? 'libuv' : 'Node C++';
  if (/^(SSL_|ssl|tls_|EVP_|ossl_|CRYPTO_|BIO_|aes|gcm|OPENSSL|ERR_|RAND_|bn_|BN_|sha|SHA|ChaCha|poly1305|x25519|X509|ASN1)/i.test(sym)) return 'OpenSSL';
  if (sym.startsWith('nghttp2')) return 'nghttp2';
  if (sym.startsWith('llhttp') || sym.startsWith('llhttp__')) return 'llhttp (HTTP/1 parser)';
  if (sym.startsWith('simdjson') || sym.startsWith('simdutf') || sym.startsWith('ada::')) return 'Node C++';
  if (dso.endsWith('/node')) return 'node binary, other';
  return `other (${dso.split('/').pop()})`;
}

/** Bytecode handlers are the interpreter; the rest are V8's builtins (ICs, calls, promises, ...). */
function builtinKind(name: string): string {
  if (/Handler$|^InterpreterEntryTrampoline|^InterpreterEnterAtBytecode|^InterpreterPushArgs|Wide$|ExtraWide$/.test(name))
    return 'interpreter (bytecode handlers)';
  if (/Baseline/.test(name)) return 'V8 builtins (Sparkplug helpers)';
  return 'V8 builtins';
}

function threadOf(tid: number, pid: number, comm: string): string {
  if (tid === pid) return 'main';
  if (comm.includes('V8Worker')) return 'V8 workers';
  return `other thread (${comm})`;
}

/** The source file of a JavaScript frame, repository-relative (src/..., node_modules/...), or a node: module. */
function originOf(script: string, line: number, column: number): string {
  if (script.startsWith('node:')) return script.replace('internal/', '');
  if (!script.endsWith('resizer.js')) return script;
  const entry = map.findEntry(line - 1, column - 1) as { originalSource?: string };
  return (entry.originalSource ?? '(unmapped bundle)').replace(/^.*?\/(src|node_modules)\//, '$1/');
}

/** Whose code a main-thread sample was for: its nearest JavaScript frame, else what ran. */
function whoseCode(stack: Frame[]): string {
  for (const frame of stack) {
    const js = JS_FRAME.exec(frame.sym);
    if (!js) continue;
    const origin = originOf(js[3]!, Number(js[4]), Number(js[5]));
    if (values.by === 'file') return origin;
    if (values.by === 'function') return `${js[2] || '(anonymous)'} ${origin}${js[3]!.endsWith('resizer.js') ? '' : `:${js[4]}`}`;
    return packageOf(origin);
  }
  return `(no JS frame) ${whatRan(stack[0]!)}`;
}

const mapped = new Map<number, boolean>();
const byWhat = new Map<string, Map<string, number>>();
const byWhose = new Map<string, number>();
let mainSamples = 0;
let allSamples = 0;
for (const file of positionals) {
  const text = execFileSync('perf', ['script', '-i', file, '-F', 'comm,pid,tid,ip,sym,dso'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) continue;
    const head = /^\s*(.+?)\s+(\d+)\/(\d+)\s*$/.exec(lines[0]!);
    if (!head) continue;
    const [, comm, pid, tid] = head;
    if (values['mapped-only'] && !hasPerfMap(Number(pid))) continue;
    const stack: Frame[] = lines.slice(1).map((l) => {
      const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(l);
      return m ? { sym: m[1]!.replace(/\+0x[0-9a-f]+$/, ''), dso: m[2]! } : { sym: '[unknown]', dso: '[unknown]' };
    });
    if (stack.length === 0) continue;
    const thread = threadOf(Number(tid), Number(pid), comm!);
    const what = whatRan(stack[0]!);
    const row = byWhat.get(what) ?? new Map<string, number>();
    row.set(thread, (row.get(thread) ?? 0) + 1);
    byWhat.set(what, row);
    allSamples++;
    if (thread === 'main') {
      mainSamples++;
      const whose = whoseCode(stack);
      byWhose.set(whose, (byWhose.get(whose) ?? 0) + 1);
    }
  }
}

const n = positionals.length;
// cpu-clock at 999 Hz: a sample is about 1 ms of CPU.
const ms = (samples: number) => (samples * 1000) / 999 / n;
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1).padStart(5)} %`;
const threads = ['main', 'V8 workers', ...new Set([...byWhat.values()].flatMap((r) => [...r.keys()]).filter((t) => t !== 'main' && t !== 'V8 workers'))];
if (values.json) {
  process.stdout.write(
    JSON.stringify(
      {
        files: n,
        msPerFile: { all: ms(allSamples), main: ms(mainSamples) },
        whatRan: Object.fromEntries([...byWhat].map(([k, r]) => [k, Object.fromEntries([...r].map(([t, s]) => [t, ms(s)]))])),
        mainByCode: Object.fromEntries([...byWhose].map(([k, s]) => [k, ms(s)])),
      },
      null,
      1,
    ) + '\n',
  );
} else {
  process.stdout.write(
    `${n} recording(s): ${ms(allSamples).toFixed(0)} ms of CPU per recording, main thread ${ms(mainSamples).toFixed(0)} ms\n\nWhat ran (ms per recording; share of all):\n`,
  );
  process.stdout.write(`${''.padEnd(40)} ${threads.map((t) => t.slice(0, 14).padStart(14)).join(' ')}   all\n`);
  for (const [what, row] of [...byWhat].sort((a, b) => sum(b[1]) - sum(a[1]))) {
    process.stdout.write(
      `${what.padEnd(40)} ${threads
        .map((t) =>
          ms(row.get(t) ?? 0)
            .toFixed(1)
            .padStart(14),
        )
        .join(' ')} ${pct(sum(row), allSamples)}\n`,
    );
  }
  process.stdout.write(`\nMain thread by whose code (nearest JavaScript frame; ms per recording, share of the main thread):\n`);
  for (const [whose, samples] of [...byWhose].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
    process.stdout.write(`${ms(samples).toFixed(1).padStart(9)} ms ${pct(samples, mainSamples)}  ${whose}\n`);
  }
}

function hasPerfMap(pid: number): boolean {
  let has = mapped.get(pid);
  if (has === undefined) mapped.set(pid, (has = existsSync(`/tmp/perf-${pid}.map`)));
  return has;
}

function sum(row: Map<string, number>): number {
  let total = 0;
  for (const v of row.values()) total += v;
  return total;
}
