// A claim's auto-grow policy, read from its StorageClass's and its own annotations
// (docs/auto-grow.md, "Policy"): whether it is opted in, and the limit, thresholds, increase,
// cooldown, minimum step and dry-run that apply to it. pvc-autoresizer's annotations mean what they
// mean there (percentages from 0% to 100%, quantities as the API server parses them, the inodes
// threshold a percentage only); ours fall back to the operator's flag defaults. Every bad value
// is reported at once, in one message, so one Warning event tells the user all there is to fix.
// Pure: the arithmetic on the sizes read here is in decision.ts.
import { parseGoDuration } from '../flags/go-duration.js';
import { messageOf } from '../base/errors.js';
import type { Pvc } from '../model/objects.js';
import { formatQuantity, parseQuantity } from '../model/quantity.js';
import { AutoGrowAnnotation, TOPOLVM_DEFAULTS, TopolvmAnnotation } from './annotations.js';

/** What the operator's flags give a claim that does not say otherwise. */
export interface AutoGrowDefaults {
  readonly cooldownMs: number;
  readonly minStepBytes: bigint;
  readonly dryRun: boolean;
}

/** The StorageClass fields auto-grow reads. */
export interface StorageClassView {
  readonly metadata: { readonly name: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly allowVolumeExpansion?: boolean;
}

/** An exact fraction of a size: numerator / denominator (a percentage of 12.5 is 125 / 1000). */
export interface Fraction {
  readonly kind: 'fraction';
  readonly numerator: bigint;
  readonly denominator: bigint;
  /** As the annotation wrote it. */
  readonly text: string;
}

export interface Bytes {
  readonly kind: 'bytes';
  readonly bytes: bigint;
  readonly text: string;
}

export type Amount = Fraction | Bytes;

export interface AutoGrowPolicy {
  readonly limitBytes: bigint;
  /** The limit in the API server's canonical form, written as the request when a grow is clamped to it. */
  readonly limit: string;
  /** Free bytes below which the claim grows: a fraction of the filesystem's capacity, or bytes. */
  readonly threshold: Amount;
  /** Free inodes below which the claim grows: a fraction of the filesystem's inodes. */
  readonly inodesThreshold: Fraction;
  /** What a grow adds: a fraction of status.capacity, or bytes. */
  readonly increase: Amount;
  readonly cooldownMs: number;
  readonly minStepBytes: bigint;
  readonly dryRun: boolean;
}

export const NotOptedIn = {
  /** The claim names no StorageClass, or it does not exist. */
  NoStorageClass: 'noStorageClass',
  /** The StorageClass has no `resize.topolvm.io/enabled: "true"`. */
  StorageClassNotEnabled: 'storageClassNotEnabled',
  /** The claim has no (or an empty) storage_limit. */
  NoLimit: 'noLimit',
  /** The storage_limit is zero, which pvc-autoresizer reads as "off". */
  ZeroLimit: 'zeroLimit',
  /** A raw block volume: there is no filesystem whose usage kubelet reports. */
  BlockVolume: 'blockVolume',
} as const;
export type NotOptedIn = (typeof NotOptedIn)[keyof typeof NotOptedIn];

export type PolicyReading =
  | { readonly kind: 'notOptedIn'; readonly reason: NotOptedIn }
  | { readonly kind: 'invalid'; readonly message: string }
  | { readonly kind: 'policy'; readonly policy: AutoGrowPolicy };

export function readPolicy(pvc: Pvc, storageClass: StorageClassView | undefined, defaults: AutoGrowDefaults): PolicyReading {
  if (storageClass === undefined) return { kind: 'notOptedIn', reason: NotOptedIn.NoStorageClass };
  if (storageClass.metadata.annotations?.[TopolvmAnnotation.Enabled] !== 'true') return { kind: 'notOptedIn', reason: NotOptedIn.StorageClassNotEnabled };
  const annotations = pvc.metadata.annotations ?? {};
  const limitText = annotations[TopolvmAnnotation.StorageLimit] ?? '';
  if (limitText === '') return { kind: 'notOptedIn', reason: NotOptedIn.NoLimit };
  if ((pvc.spec.volumeMode ?? 'Filesystem') !== 'Filesystem') return { kind: 'notOptedIn', reason: NotOptedIn.BlockVolume };

  const problems: string[] = [];
  const problem = (annotation: string, text: string, why: string) => problems.push(`${annotation}: ${JSON.stringify(text)} ${why}`);
  if (storageClass.allowVolumeExpansion !== true) {
    problems.push(`StorageClass ${storageClass.metadata.name} does not allow volume expansion (allowVolumeExpansion: true)`);
  }

  let limitBytes = 0n;
  let limit = limitText;
  const parsedLimit = quantity(limitText);
  if (parsedLimit.kind === 'error') problem(TopolvmAnnotation.StorageLimit, limitText, parsedLimit.message);
  else if (parsedLimit.bytes === 0n) return { kind: 'notOptedIn', reason: NotOptedIn.ZeroLimit };
  else if (parsedLimit.bytes < 0n) problem(TopolvmAnnotation.StorageLimit, limitText, 'is negative');
  else ({ bytes: limitBytes, canonical: limit } = parsedLimit);

  const read = <T>(annotation: string, fallback: string, parse: (text: string) => T | string): T | undefined => {
    const text = annotations[annotation] || fallback;
    const parsed = parse(text);
    if (typeof parsed === 'string') {
      problem(annotation, text, parsed);
      return undefined;
    }
    return parsed;
  };
  const threshold = read(TopolvmAnnotation.Threshold, TOPOLVM_DEFAULTS.threshold, fractionOrPositiveBytes);
  const inodesThreshold = read(TopolvmAnnotation.InodesThreshold, TOPOLVM_DEFAULTS.inodesThreshold, (text) =>
    text.endsWith('%') ? percent(text) : 'is not a percentage (the inodes threshold is a percentage of the inodes only)',
  );
  const increase = read(TopolvmAnnotation.Increase, TOPOLVM_DEFAULTS.increase, fractionOrPositiveBytes);
  const cooldownMs = annotations[AutoGrowAnnotation.Cooldown] === undefined ? defaults.cooldownMs : read(AutoGrowAnnotation.Cooldown, '', duration);
  const minStepBytes = annotations[AutoGrowAnnotation.MinStep] === undefined ? defaults.minStepBytes : read(AutoGrowAnnotation.MinStep, '', nonNegativeBytes);
  const dryRun = annotations[AutoGrowAnnotation.DryRun] === undefined ? defaults.dryRun : read(AutoGrowAnnotation.DryRun, '', bool);

  if (problems.length > 0) return { kind: 'invalid', message: `invalid auto-grow policy: ${problems.join('; ')}` };
  return {
    kind: 'policy',
    policy: {
      limitBytes,
      limit,
      threshold: threshold!,
      inodesThreshold: inodesThreshold!,
      increase: increase!,
      cooldownMs: cooldownMs!,
      minStepBytes: minStepBytes!,
      dryRun: dryRun!,
    },
  };
}

/** The part of `total` an amount stands for: a fraction rounded down (as pvc-autoresizer truncates), or the bytes. */
export function amountOf(amount: Amount, total: bigint): bigint {
  return amount.kind === 'bytes' ? amount.bytes : (total * amount.numerator) / amount.denominator;
}

// A decimal number of percent, as strconv.ParseFloat reads the ones people write: "10%", "12.5%",
// ".5%". Exponents, hex and NaN are refused rather than guessed at.
const PERCENT = /^\+?(?:(\d+)(?:\.(\d*))?|\.(\d+))%$/;

function percent(text: string): Fraction | string {
  const match = PERCENT.exec(text);
  if (!match) return 'is not a percentage from 0% to 100%';
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? match[3] ?? '';
  const numerator = BigInt(whole + fraction);
  const denominator = 100n * 10n ** BigInt(fraction.length);
  if (numerator > denominator) return 'is not a percentage from 0% to 100%';
  return { kind: 'fraction', numerator, denominator, text };
}

function quantity(text: string): { kind: 'ok'; bytes: bigint; canonical: string } | { kind: 'error'; message: string } {
  try {
    const q = parseQuantity(text);
    return { kind: 'ok', bytes: q.toBytes(), canonical: formatQuantity(q) };
  } catch (err) {
    return { kind: 'error', message: `is not a quantity (${messageOf(err)})` };
  }
}

function fractionOrPositiveBytes(text: string): Amount | string {
  if (text.endsWith('%')) return percent(text);
  const q = quantity(text);
  if (q.kind === 'error') return q.message;
  if (q.bytes <= 0n) return 'is not positive';
  return { kind: 'bytes', bytes: q.bytes, text };
}

function nonNegativeBytes(text: string): bigint | string {
  const q = quantity(text);
  if (q.kind === 'error') return q.message;
  return q.bytes < 0n ? 'is negative' : q.bytes;
}

function duration(text: string): number | string {
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    return `is not a duration (${messageOf(err)})`;
  }
  return ms < 0 ? 'is negative' : ms;
}

/** strconv.ParseBool's spellings. */
function bool(text: string): boolean | string {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  return 'is not true or false';
}
