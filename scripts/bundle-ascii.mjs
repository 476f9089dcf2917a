// Part of `npm run build` (scripts/build.sh): makes the bundle pure ASCII. esbuild escapes every
// non-ASCII character in strings, regular expressions and templates (its default charset), so
// what is left is in comments it keeps (JSDoc: "→", "§", "×"). One such character makes V8 hold the
// whole source as a two-byte string, twice the heap for the life of the process (docs/performance.md,
// "Start-up costs behind code choices"). Each UTF-16 unit becomes '?', so every column of the source
// map stays right.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: node scripts/bundle-ascii.mjs <bundle.js>');
let replaced = 0;
const out = readFileSync(file, 'utf8')
  .split('\n')
  .map((line, i) =>
    line.replace(/[^\x00-\x7f]/g, (_c, at) => {
      // A guard, should esbuild's charset ever change: the character must follow a comment opener.
      const before = line.slice(0, at);
      if (!before.includes('//') && !before.includes('/*') && !/^\s*\*/.test(line)) {
        throw new Error(`bundle-ascii: non-ASCII outside a comment at ${file}:${i + 1}:${at + 1}`);
      }
      replaced++;
      return '?';
    }),
  )
  .join('\n');
writeFileSync(file, out);
process.stdout.write(`bundle-ascii: ${replaced} non-ASCII UTF-16 units in comments replaced\n`);
