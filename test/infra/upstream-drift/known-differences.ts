// The documented list of deliberate differences from the pinned upstream version
// (known-differences.yaml beside this file): each entry names what differs (area, name, aspect),
// why, and the docs/differences/ page that describes it. A name may end in `*` to cover a family
// of names (go_* metrics); `upstream` and `ours`, when given, pin the values (a prefix of each) the
// entry documents, so the same aspect with other values is not covered. The list is exact for the pinned version: a difference it does not
// name fails the test, and so does an entry that no longer names any difference.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { repoRoot } from '../../cluster/components.js';
import { Area, type Difference } from './compare.js';

export const KNOWN_DIFFERENCES_FILE = join(dirname(fileURLToPath(import.meta.url)), 'known-differences.yaml');

export interface KnownDifference {
  readonly area: Area;
  readonly name: string;
  readonly aspect: string;
  /** A page under docs/differences/, with an optional #heading. */
  readonly doc: string;
  readonly reason: string;
  /** When given, the difference's value on that side must start with it (for an entry that documents one outcome). */
  readonly upstream?: string;
  readonly ours?: string;
}

const AREAS = new Set<string>(Object.values(Area));
const ASPECTS: Readonly<Record<Area, ReadonlySet<string>>> = {
  flag: new Set(['presence', 'type', 'default', 'help']),
  gate: new Set(['listed', 'set true', 'set false']),
  metric: new Set(['presence', 'type', 'help']),
};

/**
 * Reads and checks the list: every field there, a known area and aspect, a reason, a page that
 * exists. `problems` lists what is wrong; the entries that are whole are returned all the same.
 */
export function readKnownDifferences(text: string, source = KNOWN_DIFFERENCES_FILE): { entries: KnownDifference[]; problems: string[] } {
  const raw = yaml.load(text);
  if (!Array.isArray(raw)) throw new Error(`${source}: expected a list of entries`);
  const problems: string[] = [];
  const entries: KnownDifference[] = [];
  for (const [index, item] of raw.entries()) {
    const at = `${source} entry ${index + 1}`;
    if (typeof item !== 'object' || item === null) {
      problems.push(`${at}: not a mapping`);
      continue;
    }
    const e = item as Record<string, unknown>;
    const field = (key: string) => (typeof e[key] === 'string' && (e[key] as string).trim() !== '' ? (e[key] as string).trim() : undefined);
    const [area, name, aspect, doc, reason] = ['area', 'name', 'aspect', 'doc', 'reason'].map(field);
    const unknownKeys = Object.keys(e).filter((k) => !['area', 'name', 'aspect', 'doc', 'reason', 'upstream', 'ours'].includes(k));
    if (unknownKeys.length > 0) problems.push(`${at}: unknown field ${unknownKeys.join(', ')}`);
    if (!area || !AREAS.has(area)) {
      problems.push(`${at}: area must be one of ${[...AREAS].join(', ')}`);
      continue;
    }
    if (!name) problems.push(`${at}: no name`);
    if (!aspect || !ASPECTS[area as Area].has(aspect)) problems.push(`${at}: aspect must be one of ${[...ASPECTS[area as Area]].join(', ')}`);
    if (!reason) problems.push(`${at}: no reason`);
    if (!doc) problems.push(`${at}: no doc page`);
    else if (!/^docs\/differences\/[a-z0-9-]+\.md(#[a-z0-9-]+)?$/.test(doc))
      problems.push(`${at}: doc must be docs/differences/<page>.md[#heading], not ${doc}`);
    else if (!existsSync(join(repoRoot, doc.replace(/#.*$/, '')))) problems.push(`${at}: ${doc} does not exist`);
    if (name && aspect && reason && doc && AREAS.has(area) && ASPECTS[area as Area].has(aspect))
      entries.push({
        area: area as Area,
        name,
        aspect,
        doc,
        reason,
        ...(field('upstream') ? { upstream: field('upstream')! } : {}),
        ...(field('ours') ? { ours: field('ours')! } : {}),
      });
  }
  return { entries, problems };
}

/** readKnownDifferences, throwing when anything is wrong. */
export function parseKnownDifferences(text: string, source = KNOWN_DIFFERENCES_FILE): KnownDifference[] {
  const { entries, problems } = readKnownDifferences(text, source);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return entries;
}

export function loadKnownDifferences(): { entries: KnownDifference[]; problems: string[] } {
  return readKnownDifferences(readFileSync(KNOWN_DIFFERENCES_FILE, 'utf8'));
}

function matches(entry: KnownDifference, d: Difference): boolean {
  if (entry.area !== d.area || entry.aspect !== d.aspect) return false;
  if (entry.upstream !== undefined && !d.upstream.startsWith(entry.upstream)) return false;
  if (entry.ours !== undefined && !d.ours.startsWith(entry.ours)) return false;
  return entry.name.endsWith('*') ? d.name.startsWith(entry.name.slice(0, -1)) : entry.name === d.name;
}

export interface Classified {
  readonly documented: { readonly difference: Difference; readonly entry: KnownDifference }[];
  readonly undocumented: Difference[];
  /** Entries that name no difference any more. */
  readonly stale: KnownDifference[];
}

export function classify(differences: readonly Difference[], known: readonly KnownDifference[]): Classified {
  const used = new Set<KnownDifference>();
  const documented: Classified['documented'] = [];
  const undocumented: Difference[] = [];
  for (const difference of differences) {
    const entry = known.find((k) => matches(k, difference));
    if (entry) {
      used.add(entry);
      documented.push({ difference, entry });
    } else {
      undocumented.push(difference);
    }
  }
  return { documented, undocumented, stale: known.filter((k) => !used.has(k)) };
}
