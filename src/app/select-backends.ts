// Startup's choice of back-ends (§1 steps 14–16), from the capabilities discovered once:
// a CSI resizer, the trivial resizer for node-only drivers, or none; a modifier or none.
// Failures carry the reference's messages and exit codes.
import type { CsiClient, DriverCapabilities } from '../csi/client.js';
import type { Logger } from '../observability/log/logger.js';
import type { SecretReader } from '../kube/api/secrets.js';
import { CsiResizer } from '../resize/csi-resizer.js';
import type { Resizer } from '../resize/resizer.js';
import { TrivialResizer } from '../resize/trivial-resizer.js';
import { StartupError } from './startup-error.js';

export interface Backends {
  resizer: Resizer | undefined;
  /** The driver serves ControllerModifyVolume. */
  canModify: boolean;
}

export function selectBackends(options: {
  capabilities: DriverCapabilities;
  csi: CsiClient;
  secrets: SecretReader;
  /** The resizer's ControllerExpandVolume deadline (§2.1). */
  resizeTimeoutMs: number;
  log: Logger;
}): Backends {
  const { capabilities: caps, csi, log } = options;
  const driverName = csi.driverName;
  if (!caps.controllerService) {
    throw new StartupError('Failed to create CSI resizer', 1, { cause: new Error('CSI driver does not support controller service') });
  }

  let resizer: Resizer | undefined;
  if (caps.controllerExpand) {
    resizer = new CsiResizer({
      driverName,
      csi,
      secrets: options.secrets,
      supportsSingleNodeMultiWriter: caps.singleNodeMultiWriter,
      expansionMode: caps.volumeExpansion,
      timeoutMs: options.resizeTimeoutMs,
    });
  } else if (caps.nodeExpand) {
    log.info('The CSI driver supports node resize only, using trivial resizer to handle resize requests');
    resizer = new TrivialResizer(driverName);
  } else {
    log.info('Resize not supported', { message: new Error('CSI driver neither supports controller resize nor node resize') });
  }

  if (!caps.controllerModify) log.info('Modify not supported', { message: new Error('CSI driver does not support controller modify') });
  if (!resizer && !caps.controllerModify) {
    throw new StartupError('CSI driver does not support resize nor modify', 255);
  }
  return { resizer, canModify: caps.controllerModify };
}
