// The annotations auto-grow reads and writes (docs/auto-grow.md, "Annotations"). The opt-in and
// the policy are topolvm/pvc-autoresizer's, spelled as it spells them, so a claim annotated for it
// grows the same way here; what it lacks (cooldown, minimum step, dry-run) and the state we keep
// on the claim are under our own prefix.

/** pvc-autoresizer's names: the StorageClass opt-in and the per-claim policy. */
export const TopolvmAnnotation = {
  /** On the StorageClass: "true" opts its claims in. */
  Enabled: 'resize.topolvm.io/enabled',
  /** On the PVC: the largest size auto-grow may ask for; required, non-zero. */
  StorageLimit: 'resize.topolvm.io/storage_limit',
  /** On the PVC: grow when free bytes fall below this (a percentage of the filesystem's capacity, or a quantity). */
  Threshold: 'resize.topolvm.io/threshold',
  /** On the PVC: grow when free inodes fall below this percentage of the inodes. */
  InodesThreshold: 'resize.topolvm.io/inodes-threshold',
  /** On the PVC: how much to add (a percentage of status.capacity, or a quantity). */
  Increase: 'resize.topolvm.io/increase',
} as const;

/** pvc-autoresizer's defaults for its annotations. */
export const TOPOLVM_DEFAULTS = {
  threshold: '10%',
  inodesThreshold: '10%',
  increase: '10%',
} as const;

/** Our own prefix, beside the project's csi_resizer_ metric names. */
export const AUTO_GROW_PREFIX = 'auto-grow.csi-resizer.io';

export const AutoGrowAnnotation = {
  /** On the PVC: the least time between two grows (a Go duration); the flag's default otherwise. */
  Cooldown: `${AUTO_GROW_PREFIX}/cooldown`,
  /** On the PVC: the least a grow adds (a quantity); the flag's default otherwise. */
  MinStep: `${AUTO_GROW_PREFIX}/min-step`,
  /** On the PVC: "true" says what a grow would do and writes nothing; the flag's default otherwise. */
  DryRun: `${AUTO_GROW_PREFIX}/dry-run`,
  /** State, written with each grow: when, from and to which size, and the filesystem size seen then (JSON). */
  LastGrow: `${AUTO_GROW_PREFIX}/last-grow`,
  /** State: the storage_limit value at which the claim was reported as having reached its limit. */
  LimitReached: `${AUTO_GROW_PREFIX}/limit-reached`,
} as const;
