import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideAutoGrow, type AutoGrowDecision, type DecisionInput } from './decision.js';
import type { AutoGrowDefaults, StorageClassView } from './policy.js';
import type { ClaimUsage } from '../usage/volume-usage.js';
import type { Pvc } from '../model/objects.js';
import { pvc, type PvcOptions } from '../../test/support/builders.js';
import { cond, RESIZE_ROWS } from '../../test/support/claim-state-rows.js';

const Gi = 1n << 30n;
const NOW = Date.parse('2026-08-30T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const LIMIT = 'resize.topolvm.io/storage_limit';
const LAST_GROW = 'auto-grow.csi-resizer.io/last-grow';

const DEFAULTS: AutoGrowDefaults = { cooldownMs: 8 * HOUR + 10 * MINUTE, minStepBytes: Gi, dryRun: false };
const enabledClass: StorageClassView = { metadata: { name: 'fast', annotations: { 'resize.topolvm.io/enabled': 'true' } }, allowVolumeExpansion: true };

/** A bound 10Gi claim of the opted-in class with a 20Gi limit, plus the given annotations and fields. */
function claim(annotations: Record<string, string> = {}, o: PvcOptions = {}): Pvc {
  return pvc({ request: '10Gi', capacity: '10Gi', storageClassName: 'fast', ...o, annotations: { [LIMIT]: '20Gi', ...annotations, ...o.annotations } });
}

/** A sample of a 10Gi filesystem with `availableGi` free, taken a minute ago. */
function sample(availableGi: number, o: Partial<{ capacityBytes: bigint; inodes: bigint; inodesFree: bigint; sampledAtMs: number }> = {}): ClaimUsage {
  return {
    kind: 'sampled',
    usage: {
      capacityBytes: o.capacityBytes ?? 10n * Gi,
      availableBytes: BigInt(Math.round(availableGi * 1024)) * (Gi / 1024n),
      ...(o.inodes !== undefined ? { inodes: o.inodes, inodesFree: o.inodesFree ?? o.inodes } : {}),
      sampledAtMs: o.sampledAtMs ?? NOW - MINUTE,
    },
  };
}

function lastGrow(o: { agoMs: number; from?: string; to?: string; filesystemBytes?: bigint }): Record<string, string> {
  const at = new Date(NOW - o.agoMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { [LAST_GROW]: JSON.stringify({ at, from: o.from ?? '9Gi', to: o.to ?? '10Gi', filesystemBytes: String(o.filesystemBytes ?? 9n * Gi) }) };
}

function input(o: Partial<DecisionInput> = {}): DecisionInput {
  return {
    pvc: claim(),
    storageClass: enabledClass,
    usage: sample(0.5),
    capacitySeenSinceMs: NOW - HOUR,
    resizeFailures: 0,
    nowMs: NOW,
    defaults: DEFAULTS,
    ...o,
  };
}

type Expect =
  | { grow: string; trigger?: 'bytes' | 'inodes'; reachesLimit?: boolean; dryRun?: boolean }
  | { kind: Exclude<AutoGrowDecision['kind'], 'grow'>; reason?: string; state?: string; notify?: boolean; message?: RegExp; nextAllowedAtMs?: number };

const rows: { name: string; input: Partial<DecisionInput>; expect: Expect }[] = [
  // thresholds of free bytes, as a percentage of the filesystem's capacity
  { name: 'default 10%: 5% free grows by the default 10% to 11Gi', input: {}, expect: { grow: '11Gi', trigger: 'bytes' } },
  { name: 'default 10%: exactly 10% free does not grow (strictly below)', input: { usage: sample(1) }, expect: { kind: 'belowThreshold' } },
  { name: 'default 10%: 11% free does not grow', input: { usage: sample(1.1) }, expect: { kind: 'belowThreshold' } },
  { name: 'threshold 20%: 15% free grows', input: { pvc: claim({ 'resize.topolvm.io/threshold': '20%' }), usage: sample(1.5) }, expect: { grow: '11Gi' } },
  {
    name: 'threshold 12.5%: of the filesystem, exactly (1.25Gi free of 10Gi does not grow)',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '12.5%' }), usage: sample(1.25) },
    expect: { kind: 'belowThreshold' },
  },
  {
    name: 'threshold is of the filesystem, not of status.capacity (10% of a 5Gi filesystem is 0.5Gi)',
    input: { usage: sample(0.6, { capacityBytes: 5n * Gi }) },
    expect: { kind: 'belowThreshold' },
  },
  {
    name: 'threshold 0%: never grows by bytes',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '0%' }), usage: sample(0) },
    expect: { kind: 'belowThreshold' },
  },
  { name: 'an empty threshold falls back to 10%', input: { pvc: claim({ 'resize.topolvm.io/threshold': '' }) }, expect: { grow: '11Gi' } },
  // thresholds as quantities
  { name: 'threshold 2Gi: 1.5Gi free grows', input: { pvc: claim({ 'resize.topolvm.io/threshold': '2Gi' }), usage: sample(1.5) }, expect: { grow: '11Gi' } },
  {
    name: 'threshold 2Gi: 2Gi free does not grow',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '2Gi' }), usage: sample(2) },
    expect: { kind: 'belowThreshold' },
  },
  {
    name: 'threshold 1500M (decimal): 1.25Gi free (1.34G) grows',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '1500M' }), usage: sample(1.25) },
    expect: { grow: '11Gi' },
  },
  // inodes
  {
    name: 'inodes: 5% free inodes grow, with plenty of bytes free',
    input: { usage: sample(5, { inodes: 1000n, inodesFree: 50n }) },
    expect: { grow: '11Gi', trigger: 'inodes' },
  },
  { name: 'inodes: exactly 10% free inodes do not grow', input: { usage: sample(5, { inodes: 1000n, inodesFree: 100n }) }, expect: { kind: 'belowThreshold' } },
  {
    name: 'inodes-threshold 20%: 15% free inodes grow',
    input: { pvc: claim({ 'resize.topolvm.io/inodes-threshold': '20%' }), usage: sample(5, { inodes: 1000n, inodesFree: 150n }) },
    expect: { grow: '11Gi', trigger: 'inodes' },
  },
  {
    name: 'inodes: a filesystem reporting 0 inodes is judged on bytes only',
    input: { usage: sample(5, { inodes: 0n, inodesFree: 0n }) },
    expect: { kind: 'belowThreshold' },
  },
  { name: 'inodes: a filesystem reporting no inodes is judged on bytes only', input: { usage: sample(5) }, expect: { kind: 'belowThreshold' } },
  {
    name: 'inodes and bytes both low: the bytes are named',
    input: { usage: sample(0.5, { inodes: 1000n, inodesFree: 1n }) },
    expect: { grow: '11Gi', trigger: 'bytes' },
  },
  // the increase, the minimum step and the rounding
  { name: 'increase 5Gi: 10Gi grows to 15Gi', input: { pvc: claim({ 'resize.topolvm.io/increase': '5Gi' }) }, expect: { grow: '15Gi' } },
  { name: 'increase 25%: 12.5Gi rounds up to 13Gi', input: { pvc: claim({ 'resize.topolvm.io/increase': '25%' }) }, expect: { grow: '13Gi' } },
  {
    name: 'increase is of status.capacity: 10.5Gi + 10% = 11.55Gi rounds up to 12Gi',
    input: { pvc: claim({}, { request: '10752Mi', capacity: '10752Mi' }) },
    expect: { grow: '12Gi' },
  },
  {
    name: 'rounding: a decimal 10G (9.31Gi) + 10% rounds up to 11Gi',
    input: { pvc: claim({}, { request: '10G', capacity: '10G' }) },
    expect: { grow: '11Gi' },
  },
  {
    name: 'minimum step 1Gi (default): 5.2Gi + 10% (0.52Gi) grows by 1Gi to 6.2Gi, then rounds up to 7Gi',
    input: { pvc: claim({}, { request: '5324Mi', capacity: '5324Mi' }) },
    expect: { grow: '7Gi' },
  },
  {
    name: 'minimum step 0 (annotation): 5.2Gi + 10% rounds up to 6Gi, as pvc-autoresizer',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/min-step': '0' }, { request: '5324Mi', capacity: '5324Mi' }) },
    expect: { grow: '6Gi' },
  },
  {
    name: 'minimum step 3Gi (annotation): 10Gi + 1Gi becomes 13Gi',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/min-step': '3Gi' }) },
    expect: { grow: '13Gi' },
  },
  {
    name: 'minimum step from the flag default: 2Gi',
    input: { defaults: { ...DEFAULTS, minStepBytes: 2n * Gi } },
    expect: { grow: '12Gi' },
  },
  {
    name: 'increase 0% and no minimum step: one whole GiB, never the same size',
    input: { pvc: claim({ 'resize.topolvm.io/increase': '0%', 'auto-grow.csi-resizer.io/min-step': '0' }) },
    expect: { grow: '11Gi' },
  },
  {
    name: 'a request below the capacity (the driver rounded up): grows from the capacity',
    input: { pvc: claim({}, { request: '9Gi', capacity: '10Gi' }) },
    expect: { grow: '11Gi' },
  },
  // the limit
  {
    name: 'limit: 19Gi + 10% is clamped to the 20Gi limit',
    input: { pvc: claim({}, { request: '19Gi', capacity: '19Gi' }) },
    expect: { grow: '20Gi', reachesLimit: true },
  },
  {
    name: 'limit: a decimal limit is written as the limit, 20G',
    input: { pvc: claim({ [LIMIT]: '20G' }, { request: '18Gi', capacity: '18Gi' }) },
    expect: { grow: '20G', reachesLimit: true },
  },
  {
    name: 'limit reached: needs more, at the limit, reported once',
    input: { pvc: claim({}, { request: '20Gi', capacity: '20Gi' }) },
    expect: { kind: 'limitReached', notify: true },
  },
  {
    name: 'limit reached, already reported at this limit: no second report',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/limit-reached': '20Gi' }, { request: '20Gi', capacity: '20Gi' }) },
    expect: { kind: 'limitReached', notify: false },
  },
  {
    name: 'limit reached, reported at an older limit: reported again',
    input: { pvc: claim({ [LIMIT]: '30Gi', 'auto-grow.csi-resizer.io/limit-reached': '20Gi' }, { request: '30Gi', capacity: '30Gi' }) },
    expect: { kind: 'limitReached', notify: true },
  },
  {
    name: 'at the limit with free space: nothing to report',
    input: { pvc: claim({}, { request: '20Gi', capacity: '20Gi' }), usage: sample(5) },
    expect: { kind: 'belowThreshold' },
  },
  {
    name: 'limit below the capacity: invalid policy',
    input: { pvc: claim({ [LIMIT]: '5Gi' }) },
    expect: { kind: 'invalidPolicy', message: /storage_limit 5Gi is below the claim's capacity 10Gi/ },
  },
  {
    name: 'limit missing: not opted in',
    input: { pvc: pvc({ request: '10Gi', capacity: '10Gi', storageClassName: 'fast' }) },
    expect: { kind: 'notOptedIn', reason: 'noLimit' },
  },
  { name: 'limit empty: not opted in', input: { pvc: claim({ [LIMIT]: '' }) }, expect: { kind: 'notOptedIn', reason: 'noLimit' } },
  {
    name: 'limit 0: not opted in (pvc-autoresizer ignores it)',
    input: { pvc: claim({ [LIMIT]: '0Gi' }) },
    expect: { kind: 'notOptedIn', reason: 'zeroLimit' },
  },
  {
    name: 'limit unparsable: invalid',
    input: { pvc: claim({ [LIMIT]: 'lots' }) },
    expect: { kind: 'invalidPolicy', message: /storage_limit: "lots" is not a quantity/ },
  },
  {
    name: 'limit negative: invalid',
    input: { pvc: claim({ [LIMIT]: '-1Gi' }) },
    expect: { kind: 'invalidPolicy', message: /storage_limit: "-1Gi" is negative/ },
  },
  // the cooldown, kept on the claim
  {
    name: 'cooldown: grown an hour ago, default 8h10m: waits, and says until when',
    input: { pvc: claim(lastGrow({ agoMs: HOUR })) },
    expect: { kind: 'cooldown', nextAllowedAtMs: NOW - HOUR + DEFAULTS.cooldownMs },
  },
  { name: 'cooldown: grown 9 hours ago: grows', input: { pvc: claim(lastGrow({ agoMs: 9 * HOUR })) }, expect: { grow: '11Gi' } },
  { name: 'cooldown: ends exactly now: grows', input: { pvc: claim(lastGrow({ agoMs: DEFAULTS.cooldownMs })) }, expect: { grow: '11Gi' } },
  {
    name: 'cooldown 30m (annotation): grown an hour ago: grows',
    input: { pvc: claim({ ...lastGrow({ agoMs: HOUR }), 'auto-grow.csi-resizer.io/cooldown': '30m' }) },
    expect: { grow: '11Gi' },
  },
  {
    name: 'cooldown 0s (annotation): grown a minute before the sample: grows',
    input: { pvc: claim({ ...lastGrow({ agoMs: 2 * MINUTE }), 'auto-grow.csi-resizer.io/cooldown': '0s' }) },
    expect: { grow: '11Gi' },
  },
  {
    name: 'cooldown unparsable: invalid',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/cooldown': 'soon' }) },
    expect: { kind: 'invalidPolicy', message: /cooldown: "soon" is not a duration/ },
  },
  {
    name: 'cooldown negative: invalid',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/cooldown': '-1h' }) },
    expect: { kind: 'invalidPolicy', message: /cooldown: "-1h" is negative/ },
  },
  {
    name: 'cooldown at the limit: the limit is what is reported',
    input: { pvc: claim(lastGrow({ agoMs: HOUR, to: '20Gi' }), { request: '20Gi', capacity: '20Gi' }) },
    expect: { kind: 'limitReached', notify: true },
  },
  // stale samples
  {
    name: 'stale: the sample is older than the capacity the caller saw',
    input: { usage: sample(0.5, { sampledAtMs: NOW - 2 * HOUR }) },
    expect: { kind: 'unusableSample', reason: 'olderThanCapacity' },
  },
  {
    name: 'stale: a sample from the very moment the capacity was seen does not count',
    input: { usage: sample(0.5, { sampledAtMs: NOW - HOUR }) },
    expect: { kind: 'unusableSample', reason: 'olderThanCapacity' },
  },
  {
    name: 'stale: the sample is older than the last grow recorded on the claim (after a restart)',
    input: { pvc: claim(lastGrow({ agoMs: 10 * HOUR })), capacitySeenSinceMs: NOW - 11 * HOUR, usage: sample(0.5, { sampledAtMs: NOW - 10 * HOUR - MINUTE }) },
    expect: { kind: 'unusableSample', reason: 'olderThanCapacity' },
  },
  {
    name: 'stale: the claim grew but the filesystem is the size it was at the last grow: waits',
    input: { pvc: claim(lastGrow({ agoMs: 9 * HOUR, from: '9Gi', to: '10Gi', filesystemBytes: 9n * Gi }), {}), usage: sample(0.5, { capacityBytes: 9n * Gi }) },
    expect: { kind: 'unusableSample', reason: 'filesystemNotGrown' },
  },
  {
    name: 'the last grow never took effect (capacity still the old one): the filesystem check does not apply',
    input: { pvc: claim(lastGrow({ agoMs: 9 * HOUR, from: '10Gi', to: '11Gi', filesystemBytes: 10n * Gi })) },
    expect: { grow: '11Gi' },
  },
  { name: 'a sample of a filesystem of no size', input: { usage: sample(0, { capacityBytes: 0n }) }, expect: { kind: 'unusableSample', reason: 'noCapacity' } },
  // usage
  { name: 'no usage asked for (no pod mounts it)', input: { usage: undefined }, expect: { kind: 'usageUnavailable', reason: 'notMounted' } },
  {
    name: 'usage unavailable: the reason and message are kept',
    input: { usage: { kind: 'unavailable', reason: 'forbidden', message: 'kubelet on node-1 answered 403' } },
    expect: { kind: 'usageUnavailable', reason: 'forbidden', message: /403/ },
  },
  // not idle
  {
    name: 'not idle: pending (still provisioning, reads as size 0)',
    input: { pvc: claim({}, { capacity: undefined, phase: 'Pending' }) },
    expect: { kind: 'notIdle', reason: 'notBound' },
  },
  { name: 'not idle: bound without a capacity yet', input: { pvc: claim({}, { capacity: undefined }) }, expect: { kind: 'notIdle', reason: 'noCapacity' } },
  {
    name: 'not idle: bound with a capacity of 0',
    input: { pvc: claim({}, { request: '0', capacity: '0' }) },
    expect: { kind: 'notIdle', reason: 'noCapacity' },
  },
  {
    name: 'not idle: a bigger request waits for the resizer',
    input: { pvc: claim({}, { request: '12Gi' }) },
    expect: { kind: 'notIdle', reason: 'resizing', state: 'waiting' },
  },
  {
    name: 'not idle: a resize failed and is backing off (the resize queue counts failures)',
    input: { pvc: claim({}, { request: '12Gi' }), resizeFailures: 2 },
    expect: { kind: 'notIdle', reason: 'resizing', state: 'backoff' },
  },
  {
    name: 'not idle: a VolumeAttributesClass change in progress',
    input: { pvc: claim({}, { attributesClass: 'gold', modifyVolumeStatus: { status: 'InProgress', targetVolumeAttributesClassName: 'gold' } }) },
    expect: { kind: 'notIdle', reason: 'modifying', state: 'in_progress' },
  },
  {
    name: 'not idle: a VolumeAttributesClass change found infeasible',
    input: { pvc: claim({}, { attributesClass: 'gold', modifyVolumeStatus: { status: 'Infeasible', targetVolumeAttributesClassName: 'gold' } }) },
    expect: { kind: 'notIdle', reason: 'modifying', state: 'infeasible' },
  },
  {
    name: 'not idle: a VolumeAttributesClass asked for and not applied yet',
    input: { pvc: claim({}, { attributesClass: 'gold', currentAttributesClass: 'silver' }) },
    expect: { kind: 'notIdle', reason: 'modifying', state: 'waiting' },
  },
  // dry-run
  {
    name: 'dry-run (annotation): the grow it would do',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/dry-run': 'true' }) },
    expect: { grow: '11Gi', dryRun: true },
  },
  { name: 'dry-run (flag default)', input: { defaults: { ...DEFAULTS, dryRun: true } }, expect: { grow: '11Gi', dryRun: true } },
  {
    name: 'dry-run false (annotation) over a dry-run default',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/dry-run': 'false' }), defaults: { ...DEFAULTS, dryRun: true } },
    expect: { grow: '11Gi', dryRun: false },
  },
  {
    name: 'dry-run unparsable: invalid',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/dry-run': 'maybe' }) },
    expect: { kind: 'invalidPolicy', message: /dry-run: "maybe" is not true or false/ },
  },
  // opting in
  { name: 'no StorageClass: not opted in', input: { storageClass: undefined }, expect: { kind: 'notOptedIn', reason: 'noStorageClass' } },
  {
    name: 'StorageClass without the annotation: not opted in',
    input: { storageClass: { metadata: { name: 'fast' }, allowVolumeExpansion: true } },
    expect: { kind: 'notOptedIn', reason: 'storageClassNotEnabled' },
  },
  {
    name: 'StorageClass annotation "True": not opted in (pvc-autoresizer matches "true" only)',
    input: { storageClass: { ...enabledClass, metadata: { name: 'fast', annotations: { 'resize.topolvm.io/enabled': 'True' } } } },
    expect: { kind: 'notOptedIn', reason: 'storageClassNotEnabled' },
  },
  { name: 'a raw block claim: not opted in', input: { pvc: claim({}, { volumeMode: 'Block' }) }, expect: { kind: 'notOptedIn', reason: 'blockVolume' } },
  {
    name: 'opted-in StorageClass that does not allow expansion: invalid',
    input: { storageClass: { ...enabledClass, allowVolumeExpansion: false } },
    expect: { kind: 'invalidPolicy', message: /StorageClass fast does not allow volume expansion/ },
  },
  // bad annotations
  {
    name: 'threshold 150%: invalid',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '150%' }) },
    expect: { kind: 'invalidPolicy', message: /threshold: "150%" is not a percentage from 0% to 100%/ },
  },
  {
    name: 'threshold -5%: invalid',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '-5%' }) },
    expect: { kind: 'invalidPolicy', message: /threshold: "-5%" is not a percentage/ },
  },
  {
    name: 'threshold 1e1%: invalid (no exponents)',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '1e1%' }) },
    expect: { kind: 'invalidPolicy', message: /is not a percentage/ },
  },
  {
    name: 'threshold "some": invalid quantity',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': 'some' }) },
    expect: { kind: 'invalidPolicy', message: /threshold: "some" is not a quantity/ },
  },
  {
    name: 'threshold 0 (a quantity): not positive',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '0' }) },
    expect: { kind: 'invalidPolicy', message: /threshold: "0" is not positive/ },
  },
  {
    name: 'inodes-threshold as a quantity: invalid',
    input: { pvc: claim({ 'resize.topolvm.io/inodes-threshold': '100' }) },
    expect: { kind: 'invalidPolicy', message: /inodes-threshold: "100" is not a percentage/ },
  },
  {
    name: 'increase -1Gi: invalid',
    input: { pvc: claim({ 'resize.topolvm.io/increase': '-1Gi' }) },
    expect: { kind: 'invalidPolicy', message: /increase: "-1Gi" is not positive/ },
  },
  {
    name: 'increase 101%: invalid',
    input: { pvc: claim({ 'resize.topolvm.io/increase': '101%' }) },
    expect: { kind: 'invalidPolicy', message: /increase: "101%"/ },
  },
  {
    name: 'min-step unparsable: invalid',
    input: { pvc: claim({ 'auto-grow.csi-resizer.io/min-step': 'big' }) },
    expect: { kind: 'invalidPolicy', message: /min-step: "big" is not a quantity/ },
  },
  {
    name: 'several bad annotations: every one in the one message',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '150%', 'resize.topolvm.io/increase': 'more', 'auto-grow.csi-resizer.io/cooldown': 'soon' }) },
    expect: { kind: 'invalidPolicy', message: /threshold: "150%".*; resize\.topolvm\.io\/increase: "more".*; auto-grow\.csi-resizer\.io\/cooldown: "soon"/ },
  },
  {
    name: 'a bad annotation is reported even while a resize is in progress',
    input: { pvc: claim({ 'resize.topolvm.io/threshold': '150%' }, { request: '12Gi' }) },
    expect: { kind: 'invalidPolicy', message: /150%/ },
  },
  {
    name: 'a last-grow record that is not JSON: invalid state',
    input: { pvc: claim({ [LAST_GROW]: 'yesterday' }) },
    expect: { kind: 'invalidPolicy', message: /last-grow: "yesterday" is not JSON.*remove the annotation/ },
  },
  {
    name: 'a last-grow record without a time: invalid state',
    input: { pvc: claim({ [LAST_GROW]: '{"from":"9Gi","to":"10Gi","filesystemBytes":"1"}' }) },
    expect: { kind: 'invalidPolicy', message: /has no RFC 3339 time/ },
  },
];

for (const row of rows) {
  test(`decideAutoGrow: ${row.name}`, () => {
    const decision = decideAutoGrow(input(row.input));
    const e = row.expect;
    if ('grow' in e) {
      assert.equal(
        decision.kind,
        'grow',
        JSON.stringify(decision, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
      );
      if (decision.kind !== 'grow') return;
      assert.equal(decision.request, e.grow);
      if (e.trigger) assert.equal(decision.trigger, e.trigger);
      assert.equal(decision.reachesLimit, e.reachesLimit ?? false);
      assert.equal(decision.dryRun, e.dryRun ?? false);
      assert.ok(decision.toBytes > decision.fromBytes, 'a grow grows');
      return;
    }
    assert.equal(
      decision.kind,
      e.kind,
      JSON.stringify(decision, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    );
    const d = decision as AutoGrowDecision & { reason?: string; state?: string; notify?: boolean; message?: string; nextGrowAllowedAtMs?: number };
    if (e.reason !== undefined) assert.equal(d.reason, e.reason);
    if (e.state !== undefined) assert.equal(d.state, e.state);
    if (e.notify !== undefined) assert.equal(d.notify, e.notify);
    if (e.message !== undefined) assert.match(d.message ?? '', e.message);
    if (e.nextAllowedAtMs !== undefined) assert.equal(d.nextGrowAllowedAtMs, e.nextAllowedAtMs);
  });
}

test('decideAutoGrow: every unfinished resize state of the shared classifier rows keeps the claim from growing', () => {
  const unfinished = RESIZE_ROWS.filter((row) => row.expect !== undefined);
  assert.ok(unfinished.length >= 10);
  for (const row of unfinished) {
    const opted: Pvc = { ...row.pvc, spec: { ...row.pvc.spec, storageClassName: 'fast' }, metadata: { ...row.pvc.metadata, annotations: { [LIMIT]: '20Gi' } } };
    const decision = decideAutoGrow(input({ pvc: opted, resizeFailures: row.failures ?? 0 }));
    assert.deepEqual(decision, { kind: 'notIdle', reason: 'resizing', state: row.expect }, row.name);
  }
});

test('decideAutoGrow: a deleting claim does not grow', () => {
  const deleting = claim();
  deleting.metadata.deletionTimestamp = '2026-08-30T11:00:00Z';
  assert.deepEqual(decideAutoGrow(input({ pvc: deleting })), { kind: 'notIdle', reason: 'deleting' });
});

test('decideAutoGrow: a False Resizing condition on an idle claim does not block it', () => {
  const decision = decideAutoGrow(input({ pvc: claim({}, { conditions: [cond('Resizing', 'False')] }) }));
  assert.equal(decision.kind, 'grow');
});

test('decideAutoGrow: a grow carries what it compared and the record to write with the request', () => {
  const decision = decideAutoGrow(input({ usage: sample(0.5, { capacityBytes: 9n * Gi + 800n * (Gi / 1024n) }) }));
  assert.equal(decision.kind, 'grow');
  if (decision.kind !== 'grow') return;
  assert.equal(decision.fromBytes, 10n * Gi);
  assert.equal(decision.toBytes, 11n * Gi);
  assert.equal(decision.evaluation.availableBytes, Gi / 2n);
  // 10% of the filesystem (9.78Gi), rounded down to a byte.
  assert.equal(decision.evaluation.thresholdBytes, (9n * Gi + 800n * (Gi / 1024n)) / 10n);
  assert.deepEqual(JSON.parse(decision.annotations[LAST_GROW] ?? ''), {
    at: '2026-08-30T12:00:00Z',
    from: '10Gi',
    to: '11Gi',
    filesystemBytes: String(9n * Gi + 800n * (Gi / 1024n)),
  });
});

test('decideAutoGrow: the record a grow writes is what the next decision reads (cooldown, then the filesystem check)', () => {
  const first = decideAutoGrow(input());
  assert.equal(first.kind, 'grow');
  if (first.kind !== 'grow') return;
  // The request is raised and the resize finishes: capacity 11Gi, seen a minute after the grow.
  const grown = claim(first.annotations, { request: '11Gi', capacity: '11Gi' });
  const later = (ms: number) => ({ pvc: grown, nowMs: NOW + ms, capacitySeenSinceMs: NOW + MINUTE });
  assert.equal(decideAutoGrow(input({ ...later(2 * HOUR), usage: sample(0.5, { capacityBytes: 11n * Gi, sampledAtMs: NOW + HOUR }) })).kind, 'cooldown');
  // After the cooldown, a sample that still shows the old filesystem waits instead of growing again.
  const stillOld = decideAutoGrow(input({ ...later(9 * HOUR), usage: sample(0.5, { sampledAtMs: NOW + 9 * HOUR - MINUTE }) }));
  assert.equal(stillOld.kind, 'unusableSample');
  const grownFs = decideAutoGrow(input({ ...later(9 * HOUR), usage: sample(0.5, { capacityBytes: 11n * Gi, sampledAtMs: NOW + 9 * HOUR - MINUTE }) }));
  assert.equal(grownFs.kind, 'grow');
  if (grownFs.kind === 'grow') assert.equal(grownFs.request, '13Gi');
});
