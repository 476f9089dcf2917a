// Part of `npm run build` (scripts/build.sh): rewrites the bundle's top-level ESM imports of Node
// builtins (`import http from "node:http"`, `import { a as b } from "node:fs"`) into require() calls
// through the bundle's createRequire banner. An ESM import of a builtin copies every export into a
// module namespace, running each lazy getter: node:http's then loads undici (fetch, WebSocket),
// which the resizer never uses, at a start-up cost in CPU and RSS (docs/performance.md, "Start-up
// costs behind code choices").
// Any import of a builtin this cannot rewrite fails the build rather than slipping through.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: node scripts/bundle-builtins.mjs <bundle.js>');
const source = readFileSync(file, 'utf8');
let rewritten = 0;
const out = source.replace(/^import (.+) from "((?:node:)?[a-z0-9_/]+)";$/gm, (line, clause, spec) => {
  if (clause.includes('__createRequire')) return line; // the banner that defines require itself
  const target = spec.startsWith('node:') ? spec : `node:${spec}`;
  let binding;
  const named = /^\{([^}]*)\}$/.exec(clause.trim());
  if (/^[A-Za-z_$][\w$]*$/.test(clause)) {
    binding = clause; // default import: module.exports
  } else if (/^\* as [A-Za-z_$][\w$]*$/.test(clause)) {
    binding = clause.slice(5);
  } else if (named) {
    const parts = named[1]
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const m = /^([A-Za-z_$][\w$]*)(?: as ([A-Za-z_$][\w$]*))?$/.exec(p);
        if (!m) throw new Error(`bundle-builtins: cannot rewrite ${line}`);
        return m[2] ? `${m[1]}: ${m[2]}` : m[1];
      });
    binding = `{ ${parts.join(', ')} }`;
  } else {
    throw new Error(`bundle-builtins: cannot rewrite ${line}`);
  }
  rewritten++;
  return `const ${binding} = require(${JSON.stringify(target)});`;
});
const left = /^import .* from "(node:)?[a-z0-9_/]+";$/gm;
const remaining = [...out.matchAll(left)].filter((m) => !m[0].includes('__createRequire'));
if (remaining.length > 0) throw new Error(`bundle-builtins: imports left: ${remaining.map((m) => m[0]).join('; ')}`);
writeFileSync(file, out);
process.stdout.write(`bundle-builtins: ${rewritten} builtin imports now use require\n`);
