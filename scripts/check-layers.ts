// The layer check of `npm run lint` and `npm test`: dependency-cruiser with the rules of
// .dependency-cruiser.cjs over src/, test/, bench/ and scripts/, plus one rule the cruiser cannot
// express because it sees resolved paths, not what an import names: no import reaches into a
// library's internal files. A subpath is public when the package's "exports" declares it;
// any other subpath must be listed in DEEP_IMPORTS with the reason it is needed.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IModule } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';

const REPO = resolve(fileURLToPath(import.meta.url), '../..');
export const CONFIG_FILE = join(REPO, '.dependency-cruiser.cjs');
export const ROOTS = ['src', 'test', 'bench', 'scripts'];

/** Imports of a library's internal files, each with the reason it is needed. */
export const DEEP_IMPORTS: Readonly<Record<string, string>> = {};

export interface LayerViolation {
  rule: string;
  from: string;
  to: string;
  comment: string;
}

/** Runs every rule over `roots` under `baseDir` (default: this repository). */
export async function checkLayers(options: { baseDir?: string; roots?: string[] } = {}): Promise<LayerViolation[]> {
  const baseDir = options.baseDir ?? REPO;
  const cruiseOptions = await extractDepcruiseOptions(CONFIG_FILE);
  const roots = (options.roots ?? ROOTS).filter((root) => existsSync(join(baseDir, root)));
  const result = await cruise(roots, { ...cruiseOptions, baseDir, outputType: 'json' });
  const output = (typeof result.output === 'string' ? JSON.parse(result.output) : result.output) as ICruiseResult;
  const comments = new Map((cruiseOptions.ruleSet?.forbidden ?? []).map((rule) => [rule.name ?? '', rule.comment ?? '']));
  const violations: LayerViolation[] = output.summary.violations.map((v) => ({
    rule: v.rule.name,
    from: v.from,
    to: v.cycle && v.cycle.length > 0 ? v.cycle.map((step) => (typeof step === 'string' ? step : step.name)).join(' → ') : v.to,
    comment: comments.get(v.rule.name) ?? '',
  }));
  for (const module of output.modules) violations.push(...deepImports(module, baseDir));
  return violations;
}

function deepImports(module: IModule, baseDir: string): LayerViolation[] {
  const found: LayerViolation[] = [];
  for (const dependency of module.dependencies) {
    if (!dependency.dependencyTypes.some((type) => type.startsWith('npm'))) continue;
    const specifier = dependency.module;
    const parts = specifier.split('/');
    const packageName = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
    const subpath = specifier.slice(packageName.length);
    if (subpath === '' || DEEP_IMPORTS[specifier] !== undefined || isExported(baseDir, packageName, `.${subpath}`)) continue;
    found.push({
      rule: 'no-deep-imports',
      from: module.source,
      to: specifier,
      comment: `${packageName} does not export ${subpath.slice(1)}: import the package's public entry, or list it in scripts/check-layers.ts DEEP_IMPORTS with a reason`,
    });
  }
  return found;
}

/** Whether the package's "exports" field declares the subpath (exactly or by a "*" pattern). */
function isExported(baseDir: string, packageName: string, subpath: string): boolean {
  const manifest = join(baseDir, 'node_modules', packageName, 'package.json');
  if (!existsSync(manifest)) return false;
  const exportsField = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown }).exports;
  if (exportsField === null || typeof exportsField !== 'object' || Array.isArray(exportsField)) return false;
  return Object.keys(exportsField).some((key) => {
    if (key === subpath) return true;
    const star = key.indexOf('*');
    return star >= 0 && subpath.startsWith(key.slice(0, star)) && subpath.endsWith(key.slice(star + 1));
  });
}

export function formatViolation(v: LayerViolation): string {
  return `${v.rule}: ${v.from} → ${v.to}${v.comment ? `\n    ${v.comment}` : ''}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = await checkLayers();
  for (const v of violations) console.error(formatViolation(v));
  if (violations.length > 0) {
    console.error(`layers: ${violations.length} violation(s) of the layer map (docs/architecture.md, Layers)`);
    process.exit(1);
  }
  console.log('layers: no violations');
}
