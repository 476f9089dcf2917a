// The faults of the node chaos runs (docs/e2e.md, "Faults on the node"), one per run, each struck
// while the expansions are in flight: the node's own (kubelet, containerd with every container,
// the whole node) once kubelet has begun a NodeExpandVolume; the controller's (the leading
// resizer's container or pod, the controller's driver, the API server) once the driver has been
// working on ControllerExpandVolume calls for a moment. Each returns what it did and saw, for the
// table. Daemons are restarted by e2e/node.sh (recorded command lines, recorded pids); containers
// are killed through containerd (ctr), the pod deleted through the API.
import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import type { KubeClients } from '../../test/cluster/kube.js';
import { nodeScript, type NodeEnv } from '../node-session.js';
import { CONTROLLER_NAME, NAMESPACE } from './manifests.js';
import type { OpLogTail } from './oplog-tail.js';

const run = promisify(execFile);

export interface FaultContext {
  readonly env: NodeEnv;
  readonly admin: KubeClients;
  readonly oplog: OpLogTail;
  /** Seconds a killed daemon stays down before it starts again. */
  readonly downS: number;
  /** Where the run keeps its logs: e2e/node.sh's output for the fault goes to fault.log there. */
  readonly logDir: string;
  log(line: string): void;
}

export type Trigger = 'controller-expand' | 'node-expand' | 'never';

export interface NodeFault {
  readonly id: string;
  readonly title: string;
  readonly when: Trigger;
  /** Strikes and resolves once the fault is over (what was restarted answers again); returns facts. */
  inject(ctx: FaultContext): Promise<string[]>;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const inFlight = (ctx: FaultContext) => {
  const calls = Object.entries(ctx.oplog.inFlight()).map(([op, n]) => `${n} ${op}`);
  return calls.length > 0 ? calls.join(', ') : 'no driver call';
};

/** The resizers' Lease (its name is the driver's, sanitized, behind external-resizer-). */
export async function resizerLease(admin: KubeClients): Promise<k8s.V1Lease | undefined> {
  const leases = await admin.coordination.listNamespacedLease({ namespace: NAMESPACE });
  return leases.items.find((l) => l.metadata?.name?.startsWith('external-resizer-'));
}

/** The controller pod whose resizer holds the Lease (both resizers' identity is the pod's host name). */
export async function leaderPod(admin: KubeClients): Promise<k8s.V1Pod> {
  const holder = (await resizerLease(admin))?.spec?.holderIdentity;
  if (!holder) throw new Error('no resizer holds the Lease');
  const pods = await admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${CONTROLLER_NAME}` });
  const pod = pods.items.find((p) => p.metadata?.name === holder);
  if (!pod) throw new Error(`the Lease holder ${holder} is none of the controller pods (${pods.items.map((p) => p.metadata?.name).join(', ')})`);
  return pod;
}

function containerId(pod: k8s.V1Pod, container: string): string {
  const id = pod.status?.containerStatuses?.find((c) => c.name === container)?.containerID;
  if (!id?.startsWith('containerd://')) throw new Error(`pod ${pod.metadata?.name} has no running ${container} container (${id ?? 'none'})`);
  return id.slice('containerd://'.length);
}

/** SIGKILL to one container's task, through containerd; kubelet restarts it. */
async function killContainer(ctx: FaultContext, pod: k8s.V1Pod, container: string): Promise<void> {
  const id = containerId(pod, container);
  await run(ctx.env.ctr, ['--address', ctx.env.containerdSocket, '-n', 'k8s.io', 'tasks', 'kill', '--signal', 'SIGKILL', id], { timeout: 30_000 });
}

/** e2e/node.sh's fault subcommand, its output kept in the run's fault.log (also when it fails). */
async function nodeFault(ctx: FaultContext, args: string[], timeoutMs: number): Promise<void> {
  const file = join(ctx.logDir, 'fault.log');
  appendFileSync(file, `$ e2e/node.sh ${args.join(' ')}\n`);
  try {
    appendFileSync(file, `${await nodeScript(args, timeoutMs)}\n`);
  } catch (err) {
    appendFileSync(file, `${String(err)}\n`);
    throw err;
  }
}

async function restartDaemon(ctx: FaultContext, name: string, extra: string[] = []): Promise<string[]> {
  const before = inFlight(ctx);
  const t0 = Date.now();
  await nodeFault(ctx, ['restart', ctx.env.dir, name, '--down', String(ctx.downS), ...extra], 300_000);
  return [`${name} SIGKILLed${extra.length ? ` (${extra.join(' ')})` : ''} with ${before} in flight, answering again ${secs(Date.now() - t0)} later`];
}

const none: NodeFault = { id: 'none', title: 'no fault (baseline)', when: 'never', inject: async () => [] };

const kubeletKill: NodeFault = {
  id: 'kubelet-kill',
  title: 'kubelet SIGKILLed during node expansion, restarted',
  when: 'node-expand',
  inject: (ctx) => restartDaemon(ctx, 'kubelet'),
};

const containerdRestart: NodeFault = {
  id: 'containerd-restart',
  title: 'containerd restarted with every container on the node',
  when: 'node-expand',
  inject: (ctx) => restartDaemon(ctx, 'containerd', ['--with-containers']),
};

const nodeReboot: NodeFault = {
  id: 'node-reboot',
  title: 'whole node restarted (control plane, containerd, kubelet; mounts and loop devices gone)',
  when: 'node-expand',
  async inject(ctx) {
    const before = inFlight(ctx);
    const t0 = Date.now();
    await nodeFault(ctx, ['reboot', ctx.env.dir, '--down', String(ctx.downS)], 600_000);
    return [`node crashed with ${before} in flight, Ready again ${secs(Date.now() - t0)} later`];
  },
};

const resizerKill: NodeFault = {
  id: 'resizer-kill',
  title: "leading resizer's container SIGKILLed mid-ControllerExpandVolume",
  when: 'controller-expand',
  async inject(ctx) {
    const pod = await leaderPod(ctx.admin);
    const before = inFlight(ctx);
    await killContainer(ctx, pod, 'csi-resizer');
    return [`csi-resizer of ${pod.metadata?.name} (the leader) SIGKILLed with ${before} in flight`];
  },
};

const resizerPodDelete: NodeFault = {
  id: 'resizer-pod-delete',
  title: "leading resizer's pod deleted mid-ControllerExpandVolume (a rolling update)",
  when: 'controller-expand',
  async inject(ctx) {
    const pod = await leaderPod(ctx.admin);
    const before = inFlight(ctx);
    await ctx.admin.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: NAMESPACE });
    return [`pod ${pod.metadata?.name} (the leader) deleted with ${before} in flight; its Deployment makes another`];
  },
};

const driverKill: NodeFault = {
  id: 'driver-kill',
  title: "controller's CSI driver container SIGKILLed mid-call",
  when: 'controller-expand',
  async inject(ctx) {
    const pod = await leaderPod(ctx.admin);
    const before = inFlight(ctx);
    await killContainer(ctx, pod, 'loopfs');
    return [`loopfs driver of ${pod.metadata?.name} (the leader's) SIGKILLed with ${before} in flight`];
  },
};

const apiserverRestart: NodeFault = {
  id: 'apiserver-restart',
  title: 'kube-apiserver SIGKILLed mid-ControllerExpandVolume, restarted',
  when: 'controller-expand',
  inject: (ctx) => restartDaemon(ctx, 'kube-apiserver'),
};

export const NODE_FAULTS: readonly NodeFault[] = [
  none,
  kubeletKill,
  containerdRestart,
  nodeReboot,
  resizerKill,
  resizerPodDelete,
  driverKill,
  apiserverRestart,
];
