// One PVC bound to a volume on a fresh scripted CSI driver (test/fakes/fault-driver.ts), with its
// own namespace and StorageClass, and our resizer running for that driver. Cleanup is registered
// on the test. Shared by the resize and modify fault tests.
import type { KubeClients } from '../cluster/kube.js';
import type { ClusterHandle } from '../cluster/test-cluster.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, uniqueName, type ProvisionOptions } from '../cluster/fixtures.js';
import { FaultDriver, type FaultDriverOptions } from '../fakes/fault-driver.js';
import { startResizer, type RunningResizer } from './in-process-resizer.js';

export interface TestContextLike {
  after(fn: () => unknown): void;
}

export interface FaultScenarioOptions {
  driver?: FaultDriverOptions;
  resizerArgs?: string[];
  /** The resizer's environment (default the test process's). */
  resizerEnv?: NodeJS.ProcessEnv;
  volume?: Partial<ProvisionOptions>;
  namespace?: string;
  namespacePrefix?: string;
}

export interface FaultScenario {
  readonly driver: FaultDriver;
  resizer: RunningResizer;
  readonly namespace: string;
  readonly storageClassName: string;
  readonly pvcName: string;
  readonly pvName: string;
  readonly volumeId: string;
  /** Stops the running resizer and starts a new one (optionally with other flags). */
  restartResizer(args?: string[]): Promise<RunningResizer>;
}

export const GiB = 1n << 30n;

export async function faultScenario(t: TestContextLike, cluster: ClusterHandle, admin: KubeClients, opts: FaultScenarioOptions = {}): Promise<FaultScenario> {
  const driver = await FaultDriver.start({ name: uniqueName('fault.csi'), ...opts.driver });
  t.after(() => driver.stop());
  const namespace = opts.namespace ?? (await createNamespace(admin, opts.namespacePrefix ?? 'rz-fault'));
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
  const volumeId = uniqueName('vol');
  driver.createVolume(volumeId, GiB);
  const volume = await provisionVolume(admin, driver.address, {
    namespace,
    size: '1Gi',
    storageClassName,
    driverName: driver.name,
    existingVolumeId: volumeId,
    ...opts.volume,
  });
  const pvcName = volume.pvc.metadata!.name!;
  t.after(() => deletePvc(admin, namespace, pvcName));
  const start = (args?: string[]) =>
    startResizer({
      kubeconfig: cluster.resizerKubeconfigPath,
      csiAddress: driver.address,
      args: args ?? opts.resizerArgs ?? [],
      ...(opts.resizerEnv ? { env: opts.resizerEnv } : {}),
    });
  let resizer = await start();
  t.after(() => resizer.stop());
  const scenario: FaultScenario = {
    driver,
    resizer,
    namespace,
    storageClassName,
    pvcName,
    pvName: volume.pv.metadata!.name!,
    volumeId,
    async restartResizer(args) {
      await resizer.stop();
      resizer = await start(args);
      scenario.resizer = resizer;
      t.after(() => resizer.stop());
      return resizer;
    },
  };
  return scenario;
}
