// `csi-resizer explain NAMESPACE/PVC`, the decision half: what the resize and modify controllers
// would do with this claim now, and why, in plain words, plus what the user can do next. Pure:
// the command reads the objects and the events; the decisions come from the same planning code the
// controllers run (resize/plan.ts, modify/plan.ts), so an explanation cannot drift from behaviour.
//
// Two facts live only in a running resizer's memory: whether the last expansion ended in a final
// error, and whether the key sits in the infeasible slow set. Both are inferred from what the PVC
// shows (a ControllerResizeError condition, an Infeasible status), and the text says so.
import { messageOf } from '../base/errors.js';
import { ConditionType, ModifyStatus, ResizeStatus } from '../model/names.js';
import type { Pv, Pvc, PvcCondition, VolumeAttributesClass } from '../model/objects.js';
import { allocatedBytes, capacityBytes, isFileSystemResizePending, pvBytes, pvClaimedBy, requestedBytes, resizeStatus } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { modifyFacts, planModify } from '../modify/plan.js';
import { planExpansion, pvcNeedsResize } from '../resize/plan.js';
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
  /** Why, one fact per line. */
  reasons: string[];
  /** What the user or operator can do. */
  nextSteps: string[];
  conditions: PvcCondition[];
  events: EventFacts[];
  /** Auto-grow's view of the claim, when it opts in or --auto-grow is on. */
  autoGrow?: AutoGrowExplanation;
}

function size(bytes: bigint): string {
  return formatBytes(bytes, 'BinarySI');
}

/** The driver's answer behind the last failure, if an event carries one ("... OutOfRange ..."). */
function lastFailure(events: readonly EventFacts[], reasons: readonly string[]): EventFacts | undefined {
  return [...events].filter((e) => e.type === 'Warning' && reasons.includes(e.reason)).sort((a, b) => (b.at?.getTime() ?? 0) - (a.at?.getTime() ?? 0))[0];
}

export function explainClaim(f: ClaimFacts): Explanation {
  const out: Explanation = {
    claimFound: f.pvc !== undefined,
    verdict: '',
    reasons: [],
    nextSteps: [],
    conditions: [...(f.pvc?.status?.conditions ?? [])],
    events: [...f.events],
  };
  const { pvc, pv } = f;
  if (!pvc) {
    out.verdict = `PVC ${f.key} does not exist.`;
    out.nextSteps.push('Check the namespace and name (kubectl get pvc -n NAMESPACE).');
    return out;
  }
  const volumeName = pvc.spec.volumeName;
  if (pvc.status?.phase !== 'Bound' || !volumeName) {
    out.verdict = 'Nothing to do: the PVC is not bound to a volume yet.';
    out.reasons.push(`status.phase is ${pvc.status?.phase ?? 'unset'}${volumeName ? '' : ', spec.volumeName is empty'}.`);
    out.nextSteps.push('Resizing starts once the claim is bound; look at the provisioner and the PV controller first.');
    return out;
  }
  if (!pv) {
    out.verdict = `Stuck: the PV ${volumeName} the claim is bound to does not exist.`;
    out.reasons.push('The resizer retries with backoff until the PV appears.');
    out.nextSteps.push(`Find out what deleted PV ${volumeName}; the claim cannot grow without it.`);
    return out;
  }
  if (!canSupport(f.driver.name, pv, pvc)) {
    const owner = pv.spec.csi?.driver;
    out.verdict = `Not this resizer's claim: the PV belongs to ${owner ? `CSI driver ${owner}` : 'an in-tree volume plugin'}, this resizer serves ${f.driver.name}.`;
    out.nextSteps.push(
      owner
        ? `Check that a resizer runs beside ${owner}'s controller (csi-resizer doctor --csi-address <its socket>).`
        : 'In-tree volumes are resized by kube-controller-manager unless migrated to CSI.',
    );
    return out;
  }
  if (!pvClaimedBy(pv, pvc)) {
    const ref = pv.spec.claimRef;
    out.verdict = `Ignored: PV ${pv.metadata.name} is claimed by another PVC (claimRef ${ref?.namespace ?? ''}/${ref?.name ?? ''} uid ${ref?.uid ?? 'none'}, this claim's uid ${pvc.metadata.uid ?? 'none'}).`;
    out.reasons.push(
      'A resizer only grows a volume whose claimRef names this exact claim (namespace and UID), so a recreated claim never grows a stale volume.',
    );
    out.nextSteps.push('Rebind the PV to this claim or the claim to its own PV; the resizer will not touch a volume claimed by someone else.');
    return out;
  }

  let requested: bigint;
  let capacity: bigint;
  try {
    requested = requestedBytes(pvc);
    capacity = capacityBytes(pvc);
    pvBytes(pv);
    allocatedBytes(pvc);
  } catch (err) {
    out.verdict = 'Stuck: a size on the claim or its PV cannot be read, so the resizer fails on every attempt.';
    out.reasons.push(messageOf(err));
    out.nextSteps.push('Fix the quantity (e.g. 10Gi) on the object named above.');
    return out;
  }
  const storageClass = f.storageClass;
  if (storageClass === null)
    out.reasons.push(`StorageClass ${pvc.spec.storageClassName ?? ''} does not exist: the API server refuses any new size for this claim.`);
  else if (storageClass && !storageClass.allowVolumeExpansion) {
    out.reasons.push(`StorageClass ${storageClass.name} does not set allowVolumeExpansion: true, so the API server refuses a larger request.`);
    out.nextSteps.push(`An administrator can set allowVolumeExpansion: true on StorageClass ${storageClass.name}.`);
  }

  explainResize(f, pvc, pv, requested, capacity, out);
  explainModify(f, pvc, out);
  const autoGrow = f.autoGrow ? explainAutoGrow(pvc, f.autoGrow, f.now) : undefined;
  if (autoGrow) out.autoGrow = autoGrow;
  return out;
}

function explainResize(f: ClaimFacts, pvc: Pvc, pv: Pv, requested: bigint, capacity: bigint, out: Explanation): void {
  const status = resizeStatus(pvc);
  const allocated = allocatedBytes(pvc);
  const pvSize = pvBytes(pv);
  const fsPending = isFileSystemResizePending(pvc);
  const failure = lastFailure(f.events, ['VolumeResizeFailed']);
  const failureText = failure ? `the driver answered${ago(failure.at, f.now)}: ${failure.message}` : undefined;
  out.reasons.push(
    `Requested ${size(requested)}, capacity ${size(capacity)}, PV ${size(pvSize)}${allocated !== undefined ? `, allocated ${size(allocated)}` : ''}${status ? `, status ${status}` : ''}.`,
  );

  if (!pvcNeedsResize(pvc.status?.phase, pvc.spec.volumeName, requested, capacity)) {
    if (out.verdict === '') out.verdict = 'Nothing to resize: the claim already has the capacity it asks for.';
    if (allocated !== undefined && allocated > requested) {
      out.reasons.push(`The request was lowered below an earlier allocation of ${size(allocated)}; the resizer no longer acts on it.`);
    }
    return;
  }
  if (f.driver.controllerExpand === false && f.driver.nodeExpand === false) {
    out.verdict = `Never: driver ${f.driver.name} supports neither controller nor node expansion, so no resizer runs for it.`;
    out.nextSteps.push('Use a driver version with EXPAND_VOLUME, or lower the request back to the current capacity.');
    return;
  }

  const hasFinalError = pvc.status?.conditions?.some((c) => c.type === ConditionType.ControllerResizeError) ?? false;
  const { plan } = planExpansion({
    requestedBytes: requested,
    pvBytes: pvSize,
    allocatedBytes: allocated,
    resizeStatus: status,
    hasFinalError,
    fileSystemResizePending: fsPending,
    supportsControlPlaneExpansion: f.driver.controllerExpand !== false,
    // The slow set is the running resizer's memory; the infeasible wait is told from the status below.
    inSlowSet: false,
  });
  if (plan.kind === 'delay') return; // not reached without a slow-set entry
  if (plan.kind === 'nothing') {
    out.verdict = `Waiting for kubelet: ${plan.why}. The controller side is done (the PV has ${size(pvSize)}).`;
    if (f.usedBy !== undefined && f.usedBy.length === 0) {
      out.nextSteps.push('No pod uses the claim: kubelet grows the file system the next time a pod mounts it, so start one.');
    } else {
      out.nextSteps.push(
        "kubelet grows the file system on the node where a pod uses the claim; if it does not, look at that node's kubelet log and the pod's events.",
      );
    }
    return;
  }

  const target = size(plan.targetBytes);
  if (status === ResizeStatus.ControllerResizeInfeasible && !plan.rewritesAllocation) {
    out.verdict = `Waiting: the driver called ${target} infeasible, so the resizer retries only after --retry-interval-max unless the request changes.`;
    if (failureText) out.reasons.push(`The last attempt failed: ${failureText}.`);
    out.nextSteps.push(
      `Lower the request to a size the driver accepts (at least the current capacity, ${size(capacity)}); recovery from a failed expansion is allowed.`,
    );
    return;
  }
  if (status === ResizeStatus.NodeResizeInfeasible) {
    out.verdict = `Expand again to ${target}: kubelet found the node-side expansion infeasible, so the controller re-arms it.`;
    out.nextSteps.push(`If the node cannot grow the file system, lower the request (at least ${size(capacity)}).`);
    return;
  }
  if (f.driver.offlineOnly && f.usedBy !== undefined && f.usedBy.length > 0) {
    out.verdict = `Waiting: expand to ${target} once no pod uses the volume (driver ${f.driver.name} only expands offline).`;
    out.reasons.push(`Used by ${f.usedBy.join(', ')}.`);
    out.nextSteps.push('Stop the pods that use the claim (scale the workload to 0); the resizer expands the volume, then start them again.');
    return;
  }
  out.verdict = hasFinalError
    ? `Retry with backoff: expand the volume to ${target}; the last attempt failed.`
    : status === ResizeStatus.ControllerResizeInProgress
      ? `Expand the volume to ${target}: an expansion to that size is in progress or its outcome is unknown, so it is repeated.`
      : `Expand the volume to ${target}: the driver will be called (ControllerExpandVolume).`;
  if (failureText) {
    out.reasons.push(`The last attempt failed: ${failureText}.`);
    if (/code = OutOfRange/.test(failure?.message ?? '')) {
      out.nextSteps.push(
        `The driver refused the size as out of range: lower the request (to at least the current capacity, ${size(capacity)}) or ask for a size the driver supports.`,
      );
    } else {
      out.nextSteps.push(
        "Read the driver's log for the failed ControllerExpandVolume call; the resizer keeps retrying with exponential backoff up to --retry-interval-max.",
      );
    }
  }
}

function explainModify(f: ClaimFacts, pvc: Pvc, out: Explanation): void {
  const wanted = pvc.spec.volumeAttributesClassName;
  const current = pvc.status?.currentVolumeAttributesClassName ?? '';
  const hasStatus = !!pvc.status?.modifyVolumeStatus;
  if ((wanted === undefined || wanted === null || wanted === '') && current === '' && !hasStatus) return;
  if (!f.gates.volumeAttributesClass) {
    out.reasons.push(
      'Modify: the VolumeAttributesClass feature is off (or the API server does not serve it), so no resizer acts on volumeAttributesClassName.',
    );
    return;
  }
  if (f.driver.modify === false) {
    out.reasons.push(`Modify: driver ${f.driver.name} does not support ControllerModifyVolume; the class change stays pending.`);
    return;
  }
  const infeasible = pvc.status?.modifyVolumeStatus?.status === ModifyStatus.Infeasible;
  const { plan } = planModify(modifyFacts(pvc, infeasible, false));
  const failure = lastFailure(f.events, ['VolumeModifyFailed']);
  switch (plan.kind) {
    case 'nothing':
      out.reasons.push(`Modify: nothing to do (${plan.why}).`);
      return;
    case 'delay':
      out.reasons.push(
        `Modify: waiting; the driver called class ${pvc.status?.modifyVolumeStatus?.targetVolumeAttributesClassName ?? ''} infeasible, retried after --retry-interval-max.`,
      );
      out.nextSteps.push(`Point the claim at another VolumeAttributesClass, or back to ${current === '' ? 'none' : current}.`);
      break;
    case 'cancel':
      out.reasons.push('Modify: the class was cleared before the change finished; the resizer cancels the pending modification.');
      break;
    case 'retryPrevious':
      out.reasons.push(`Modify: call ControllerModifyVolume again for class ${plan.target} (its outcome is unknown).`);
      break;
    case 'modify':
      if (f.attributesClass === null) {
        out.reasons.push(`Modify: waiting; VolumeAttributesClass ${plan.target} does not exist (the resizer retries when it is created).`);
        out.nextSteps.push(`Create VolumeAttributesClass ${plan.target} for driver ${f.driver.name}, or point the claim at an existing one.`);
        return;
      }
      if (f.attributesClass && f.attributesClass.driverName !== f.driver.name) {
        out.reasons.push(`Modify: VolumeAttributesClass ${plan.target} is for driver ${f.attributesClass.driverName}, not ${f.driver.name}.`);
      }
      out.reasons.push(`Modify: call ControllerModifyVolume with the parameters of class ${plan.target}.`);
      break;
    default: {
      const unknown: never = plan;
      throw new Error(`unhandled modify plan ${JSON.stringify(unknown)}`);
    }
  }
  if (failure) out.reasons.push(`Modify: the last attempt failed${ago(failure.at, f.now)}: ${failure.message}.`);
}
