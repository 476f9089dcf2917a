// `csi-resizer explain NAMESPACE/PVC`, the decision half: what the resize and modify controllers
// would do with this claim now, and why, in plain words, plus what the user can do next. Pure:
// the command reads the objects and the events; the decisions come from the same planning code the
// controllers run (resize/plan.ts, modify/plan.ts), so an explanation cannot drift from behaviour.
//
// Where the claim stands comes from model/claim-state.ts, the classification behind the
// csi_resizer_pvcs gauge and doctor's table of claims, so the three never disagree about a claim.
// Two facts live only in a running resizer's memory: whether the last expansion ended in a final
// error, and whether the key sits in the infeasible slow set. Both are read from what the PVC
// records as data: the state (a ControllerResizeError=True condition is `backoff`) and the
// Infeasible status the resizer writes for the driver's infeasible codes. Event text is shown,
// never parsed.
import { messageOf } from '../base/errors.js';
import { ClaimState, modifyProgress, resizeProgress } from '../model/claim-state.js';
import { ModifyStatus, ResizeStatus } from '../model/names.js';
import type { Pv, Pvc, PvcCondition, VolumeAttributesClass } from '../model/objects.js';
import { allocatedBytes, capacityBytes, isFileSystemResizePending, pvBytes, pvClaimedBy, requestedBytes, resizeStatus } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { modifyFacts, planModify } from '../modify/plan.js';
import { planExpansion, pvcNeedsResize, type ExpansionPlan } from '../resize/plan.js';
import { canSupport } from '../model/volume-scope.js';
import { ago } from './age.js';
import { explainAutoGrow, type AutoGrowExplanation, type AutoGrowFacts } from './explain-auto-grow.js';

export interface StorageClassFacts {
  name: string;
  provisioner: string;
  allowVolumeExpansion: boolean;
}

export interface EventFacts {
  type: string;
  reason: string;
  message: string;
  /** The newest time the event was seen. */
  at: Date | undefined;
  count: number;
}

export interface DriverFacts {
  name: string;
  /** Undefined when the driver could not be asked (the explanation then assumes controller expansion). */
  controllerExpand: boolean | undefined;
  nodeExpand: boolean | undefined;
  modify: boolean | undefined;
  /** Offline-only expansion: the volume must not be in use. */
  offlineOnly: boolean | undefined;
}

export interface ClaimFacts {
  key: string;
  pvc: Pvc | undefined;
  pv: Pv | undefined;
  /** undefined: the PVC names no class; null: it names one that does not exist. */
  storageClass: StorageClassFacts | null | undefined;
  /** The class spec.volumeAttributesClassName names: undefined when none is named, null when missing. */
  attributesClass: VolumeAttributesClass | null | undefined;
  events: readonly EventFacts[];
  driver: DriverFacts;
  gates: { volumeAttributesClass: boolean };
  /** Pods that use the claim (names), when known. */
  usedBy: readonly string[] | undefined;
  /** What auto-grow reads of the claim (docs/auto-grow.md); absent: not asked. */
  autoGrow?: AutoGrowFacts;
  now: Date;
}

export interface Explanation {
  claimFound: boolean;
  /** One line: what the resizer does with the claim now. */
  verdict: string;
  /**
   * Where its resize stands, as the csi_resizer_pvcs gauge counts it (model/claim-state.ts), read
   * from the PVC alone (no queue here); undefined when nothing is unfinished, or when the claim has
   * no PV of this driver.
   */
  resizeState: ClaimState | undefined;
  /** Where its modify stands (model/claim-state.ts), likewise. */
  modifyState: ClaimState | undefined;
  /** Why, one fact per line. */
  reasons: string[];
  /** What the user or operator can do. */
  nextSteps: string[];
  conditions: PvcCondition[];
  events: EventFacts[];
  /** Auto-grow's view of the claim, when it opts in or --auto-grow is on. */
  autoGrow?: AutoGrowExplanation;
}

/** What a part of the explanation says: the user's next steps and the facts behind them. */
interface Notes {
  reasons: string[];
  nextSteps: string[];
}

/** A decision: the verdict, with its notes. */
interface Finding extends Notes {
  verdict: string;
}

function finding(verdict: string, reasons: string[] = [], nextSteps: string[] = []): Finding {
  return { verdict, reasons, nextSteps };
}

/** The sizes of a claim the resizer acts on, in bytes. */
interface Sizes {
  requested: bigint;
  capacity: bigint;
  pv: bigint;
  allocated: bigint | undefined;
}

function size(bytes: bigint): string {
  return formatBytes(bytes, 'BinarySI');
}

/** The newest Warning event with one of these reasons: shown as the driver's last answer, never parsed. */
function lastFailure(events: readonly EventFacts[], reasons: readonly string[]): EventFacts | undefined {
  return [...events].filter((e) => e.type === 'Warning' && reasons.includes(e.reason)).sort((a, b) => (b.at?.getTime() ?? 0) - (a.at?.getTime() ?? 0))[0];
}

export function explainClaim(f: ClaimFacts): Explanation {
  const { verdict, reasons, nextSteps } = decide(f);
  const autoGrow = f.pvc && f.autoGrow ? explainAutoGrow(f.pvc, f.autoGrow, f.now) : undefined;
  return {
    claimFound: f.pvc !== undefined,
    verdict,
    ...claimStates(f),
    reasons,
    nextSteps,
    conditions: [...(f.pvc?.status?.conditions ?? [])],
    events: [...f.events],
    ...(autoGrow ? { autoGrow } : {}),
  };
}

/**
 * The claim's states as the gauge takes them: for a PVC whose PV this driver serves (canSupport,
 * §3.8, as the gauge decides ownership, §5.4); from the PVC alone, as doctor reads it.
 */
function claimStates(f: ClaimFacts): Pick<Explanation, 'resizeState' | 'modifyState'> {
  const { pvc, pv } = f;
  if (!pvc || !pv || !canSupport(f.driver.name, pv, pvc)) return { resizeState: undefined, modifyState: undefined };
  return { resizeState: resizeProgress(pvc)?.state, modifyState: modifyProgress(pvc)?.state };
}

function decide(f: ClaimFacts): Finding {
  const { pvc } = f;
  if (!pvc) return finding(`PVC ${f.key} does not exist.`, [], ['Check the namespace and name (kubectl get pvc -n NAMESPACE).']);
  const admitted = admit(f, pvc);
  if (admitted.kind === 'ignored') return admitted.finding;
  const { pv } = admitted;
  const sizes = readSizes(pvc, pv);
  if ('verdict' in sizes) return sizes;
  const resize = explainResize(f, pvc, sizes);
  const parts = [storageClassNotes(f, pvc), resize, explainModify(f, pvc)];
  return {
    verdict: resize.verdict,
    reasons: parts.flatMap((p) => p.reasons),
    nextSteps: parts.flatMap((p) => p.nextSteps),
  };
}

/** Whether the controllers act on the claim at all (§3.3, §3.8): bound, its PV there, this driver's, claimed back. */
function admit(f: ClaimFacts, pvc: Pvc): { kind: 'ignored'; finding: Finding } | { kind: 'admitted'; pv: Pv } {
  const ignored = (verdict: string, reasons: string[], nextSteps: string[]) => ({ kind: 'ignored' as const, finding: finding(verdict, reasons, nextSteps) });
  const { pv } = f;
  const volumeName = pvc.spec.volumeName;
  if (pvc.status?.phase !== 'Bound' || !volumeName) {
    return ignored(
      'Nothing to do: the PVC is not bound to a volume yet.',
      [`status.phase is ${pvc.status?.phase ?? 'unset'}${volumeName ? '' : ', spec.volumeName is empty'}.`],
      ['Resizing starts once the claim is bound; look at the provisioner and the PV controller first.'],
    );
  }
  if (!pv) {
    return ignored(
      `Stuck: the PV ${volumeName} the claim is bound to does not exist.`,
      ['The resizer retries with backoff until the PV appears.'],
      [`Find out what deleted PV ${volumeName}; the claim cannot grow without it.`],
    );
  }
  if (!canSupport(f.driver.name, pv, pvc)) {
    const owner = pv.spec.csi?.driver;
    return ignored(
      `Not this resizer's claim: the PV belongs to ${owner ? `CSI driver ${owner}` : 'an in-tree volume plugin'}, this resizer serves ${f.driver.name}.`,
      [],
      [
        owner
          ? `Check that a resizer runs beside ${owner}'s controller (csi-resizer doctor --csi-address <its socket>).`
          : 'In-tree volumes are resized by kube-controller-manager unless migrated to CSI.',
      ],
    );
  }
  if (!pvClaimedBy(pv, pvc)) {
    const ref = pv.spec.claimRef;
    return ignored(
      `Ignored: PV ${pv.metadata.name} is claimed by another PVC (claimRef ${ref?.namespace ?? ''}/${ref?.name ?? ''} uid ${ref?.uid ?? 'none'}, this claim's uid ${pvc.metadata.uid ?? 'none'}).`,
      ['A resizer only grows a volume whose claimRef names this exact claim (namespace and UID), so a recreated claim never grows a stale volume.'],
      ['Rebind the PV to this claim or the claim to its own PV; the resizer will not touch a volume claimed by someone else.'],
    );
  }
  return { kind: 'admitted', pv };
}

/** The sizes, or why they cannot be read (the resizer then fails on every attempt). */
function readSizes(pvc: Pvc, pv: Pv): Sizes | Finding {
  try {
    return { requested: requestedBytes(pvc), capacity: capacityBytes(pvc), pv: pvBytes(pv), allocated: allocatedBytes(pvc) };
  } catch (err) {
    return finding(
      'Stuck: a size on the claim or its PV cannot be read, so the resizer fails on every attempt.',
      [messageOf(err)],
      ['Fix the quantity (e.g. 10Gi) on the object named above.'],
    );
  }
}

/** What the claim's StorageClass lets the API server accept. */
function storageClassNotes(f: ClaimFacts, pvc: Pvc): Notes {
  const storageClass = f.storageClass;
  if (storageClass === null) {
    return { reasons: [`StorageClass ${pvc.spec.storageClassName ?? ''} does not exist: the API server refuses any new size for this claim.`], nextSteps: [] };
  }
  if (storageClass && !storageClass.allowVolumeExpansion) {
    return {
      reasons: [`StorageClass ${storageClass.name} does not set allowVolumeExpansion: true, so the API server refuses a larger request.`],
      nextSteps: [`An administrator can set allowVolumeExpansion: true on StorageClass ${storageClass.name}.`],
    };
  }
  return { reasons: [], nextSteps: [] };
}

/** The resize half: the sizes, then the decision of resize/plan.ts and what it means for the user. */
function explainResize(f: ClaimFacts, pvc: Pvc, sizes: Sizes): Finding {
  const status = resizeStatus(pvc);
  const { requested, capacity, allocated } = sizes;
  const line = `Requested ${size(requested)}, capacity ${size(capacity)}, PV ${size(sizes.pv)}${allocated !== undefined ? `, allocated ${size(allocated)}` : ''}${status ? `, status ${status}` : ''}.`;
  const decision = resizeDecision(f, pvc, sizes, status);
  return { ...decision, reasons: [line, ...decision.reasons] };
}

function resizeDecision(f: ClaimFacts, pvc: Pvc, sizes: Sizes, status: string): Finding {
  const { requested, capacity, allocated } = sizes;
  if (!pvcNeedsResize(pvc.status?.phase, pvc.spec.volumeName, requested, capacity)) {
    const lowered = allocated !== undefined && allocated > requested;
    return finding(
      'Nothing to resize: the claim already has the capacity it asks for.',
      lowered ? [`The request was lowered below an earlier allocation of ${size(allocated)}; the resizer no longer acts on it.`] : [],
    );
  }
  if (f.driver.controllerExpand === false && f.driver.nodeExpand === false) {
    return finding(
      `Never: driver ${f.driver.name} supports neither controller nor node expansion, so no resizer runs for it.`,
      [],
      ['Use a driver version with EXPAND_VOLUME, or lower the request back to the current capacity.'],
    );
  }
  const state = resizeProgress(pvc)?.state;
  const { plan } = planExpansion({
    requestedBytes: requested,
    pvBytes: sizes.pv,
    allocatedBytes: allocated,
    resizeStatus: status,
    // A final error is the `backoff` state: a ControllerResizeError=True condition (§5.4).
    hasFinalError: state === ClaimState.Backoff,
    fileSystemResizePending: isFileSystemResizePending(pvc),
    supportsControlPlaneExpansion: f.driver.controllerExpand !== false,
    // The slow set is the running resizer's memory; an Infeasible status is what parks a key in it.
    inSlowSet: status === ResizeStatus.ControllerResizeInfeasible,
  });
  const failure = lastFailure(f.events, ['VolumeResizeFailed']);
  const failed = failure ? [`The last attempt failed: the driver answered${ago(failure.at, f.now)}: ${failure.message}.`] : [];
  switch (plan.kind) {
    case 'nothing':
      return waitingForKubelet(f, plan.why, sizes.pv);
    case 'delay':
      // The size parked is the allocation the status already asks for.
      return finding(
        `Waiting: the driver called ${size(allocated ?? requested)} infeasible, so the resizer retries only after --retry-interval-max unless the request changes.`,
        failed,
        [`Lower the request to a size the driver accepts (at least the current capacity, ${size(capacity)}); recovery from a failed expansion is allowed.`],
      );
    case 'expand':
      return expansion(f, sizes, { status, state, plan, failed });
    default: {
      const unknown: never = plan;
      throw new Error(`unhandled expansion plan ${JSON.stringify(unknown)}`);
    }
  }
}

function waitingForKubelet(f: ClaimFacts, why: string, pvBytes: bigint): Finding {
  const idle = f.usedBy !== undefined && f.usedBy.length === 0;
  return finding(
    `Waiting for kubelet: ${why}. The controller side is done (the PV has ${size(pvBytes)}).`,
    [],
    [
      idle
        ? 'No pod uses the claim: kubelet grows the file system the next time a pod mounts it, so start one.'
        : "kubelet grows the file system on the node where a pod uses the claim; if it does not, look at that node's kubelet log and the pod's events.",
    ],
  );
}

/** A driver call the controller will make: what it is, what holds it back, what the last failure means. */
function expansion(
  f: ClaimFacts,
  sizes: Sizes,
  o: { status: string; state: ClaimState | undefined; plan: Extract<ExpansionPlan, { kind: 'expand' }>; failed: string[] },
): Finding {
  const target = size(o.plan.targetBytes);
  const least = size(sizes.capacity);
  if (o.status === ResizeStatus.NodeResizeInfeasible) {
    return finding(
      `Expand again to ${target}: kubelet found the node-side expansion infeasible, so the controller re-arms it.`,
      [],
      [`If the node cannot grow the file system, lower the request (at least ${least}).`],
    );
  }
  if (f.driver.offlineOnly && f.usedBy !== undefined && f.usedBy.length > 0) {
    return finding(
      `Waiting: expand to ${target} once no pod uses the volume (driver ${f.driver.name} only expands offline).`,
      [`Used by ${f.usedBy.join(', ')}.`],
      ['Stop the pods that use the claim (scale the workload to 0); the resizer expands the volume, then start them again.'],
    );
  }
  const verdict =
    o.state === ClaimState.Backoff
      ? `Retry with backoff: expand the volume to ${target}; the last attempt failed.`
      : o.status === ResizeStatus.ControllerResizeInProgress
        ? `Expand the volume to ${target}: an expansion to that size is in progress or its outcome is unknown, so it is repeated.`
        : `Expand the volume to ${target}: the driver will be called (ControllerExpandVolume).`;
  if (o.failed.length === 0) return finding(verdict);
  // The Infeasible status is how the resizer records the driver's infeasible codes (§3.7).
  const next =
    o.state === ClaimState.Infeasible
      ? `The driver called the last size infeasible; if it refuses ${target} too, lower the request (to at least the current capacity, ${least}) or ask for a size the driver supports.`
      : "Read the driver's log for the failed ControllerExpandVolume call; the resizer keeps retrying with exponential backoff up to --retry-interval-max.";
  return finding(verdict, o.failed, [next]);
}

/** The modify half: what modify/plan.ts decides for the class the claim names. */
function explainModify(f: ClaimFacts, pvc: Pvc): Notes {
  const notes = (reasons: string[], nextSteps: string[] = []): Notes => ({ reasons, nextSteps });
  const wanted = pvc.spec.volumeAttributesClassName;
  const current = pvc.status?.currentVolumeAttributesClassName ?? '';
  if ((wanted === undefined || wanted === null || wanted === '') && current === '' && !pvc.status?.modifyVolumeStatus) return notes([]);
  if (!f.gates.volumeAttributesClass) {
    return notes(['Modify: the VolumeAttributesClass feature is off (or the API server does not serve it), so no resizer acts on volumeAttributesClassName.']);
  }
  if (f.driver.modify === false) return notes([`Modify: driver ${f.driver.name} does not support ControllerModifyVolume; the class change stays pending.`]);
  const infeasible = pvc.status?.modifyVolumeStatus?.status === ModifyStatus.Infeasible;
  const { plan } = planModify(modifyFacts(pvc, infeasible, false));
  const failure = lastFailure(f.events, ['VolumeModifyFailed']);
  const failed = failure ? [`Modify: the last attempt failed${ago(failure.at, f.now)}: ${failure.message}.`] : [];
  switch (plan.kind) {
    case 'nothing':
      return notes([`Modify: nothing to do (${plan.why}).`]);
    case 'delay':
      return notes(
        [
          `Modify: waiting; the driver called class ${pvc.status?.modifyVolumeStatus?.targetVolumeAttributesClassName ?? ''} infeasible, retried after --retry-interval-max.`,
          ...failed,
        ],
        [`Point the claim at another VolumeAttributesClass, or back to ${current === '' ? 'none' : current}.`],
      );
    case 'cancel':
      return notes(['Modify: the class was cleared before the change finished; the resizer cancels the pending modification.', ...failed]);
    case 'retryPrevious':
      return notes([`Modify: call ControllerModifyVolume again for class ${plan.target} (its outcome is unknown).`, ...failed]);
    case 'modify':
      return modifyTo(f, plan.target, failed);
    default: {
      const unknown: never = plan;
      throw new Error(`unhandled modify plan ${JSON.stringify(unknown)}`);
    }
  }
}

function modifyTo(f: ClaimFacts, target: string, failed: string[]): Notes {
  if (f.attributesClass === null) {
    return {
      reasons: [`Modify: waiting; VolumeAttributesClass ${target} does not exist (the resizer retries when it is created).`],
      nextSteps: [`Create VolumeAttributesClass ${target} for driver ${f.driver.name}, or point the claim at an existing one.`],
    };
  }
  const otherDriver =
    f.attributesClass && f.attributesClass.driverName !== f.driver.name
      ? [`Modify: VolumeAttributesClass ${target} is for driver ${f.attributesClass.driverName}, not ${f.driver.name}.`]
      : [];
  return { reasons: [...otherDriver, `Modify: call ControllerModifyVolume with the parameters of class ${target}.`, ...failed], nextSteps: [] };
}
