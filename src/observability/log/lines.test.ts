// Every log call in src/ is pinned here: message, keys, level and kind, next to the upstream line
// it reproduces (external-resizer v2.2.1, csi-lib-utils v0.24.0, client-go v0.36.1, component-base
// v0.36.1) or the reason it is ours alone. A new, changed or removed log line fails this test until
// the table says where it comes from.
//
// Kinds: info/warn/error are klog.InfoS/ErrorS (structured); infof/warnf/errorf/fatalf are
// klog.Infof/Warningf/Errorf/Fatalf (the text as is); startupError is a StartupError that app/exit.ts logs
// with klog.ErrorS(cause, message) (exit code in `level`; 255 is klog.Fatalf's line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RULE_EFFECTS } from '../../kube/api/required-permissions.js';
import { Message } from '../../model/names.js';
import { findLogCalls, type LogCall } from '../../../test/support/log-calls.js';

type Row = readonly [file: string, kind: LogCall['method'], level: number, message: string, keys: string, source: string];

const ER = 'external-resizer v2.2.1';
const LIB = 'csi-lib-utils v0.24.0';
const CG = 'client-go v0.36.1';

const TABLE: readonly Row[] = [
  // startup (cmd/csi-resizer/main.go)
  ['app/exit.ts', 'error', 0, 'LoggingConfiguration is invalid', 'err', `${ER} cmd/csi-resizer/main.go:94`],
  ['app/run.ts', 'info', 0, 'Version', 'version', `${ER} cmd/csi-resizer/main.go:102`],
  ['app/exit.ts', 'error', 0, 'Only one of `--metrics-address` and `--http-endpoint` can be set.', '', `${ER} cmd/csi-resizer/main.go:105`],
  ['app/exit.ts', 'error', 0, 'Failed to set feature gates', 'err', `${ER} cmd/csi-resizer/main.go:113`],
  ['app/build.ts', 'startupError', 1, 'Failed to create cluster config', 'cause', `${ER} cmd/csi-resizer/main.go:125`],
  ['app/build.ts', 'startupError', 1, 'Failed to create kube client', 'cause', `${ER} cmd/csi-resizer/main.go:130 (client-go's rate-limiter check)`],
  ['app/run.ts', 'info', 0, 'w.message', 'featureGate,value', 'component-base featuregate: the warning for setting a GA or deprecated gate'],
  [
    'app/build.ts',
    'startupError',
    1,
    '--node-deployment needs the node name in the NODE_NAME environment variable (fieldRef spec.nodeName in the DaemonSet)',
    '',
    'ours: --node-deployment (docs/differences/node-deployment.md)',
  ],
  ['app/build.ts', 'startupError', 1, '`Failed to get node ${name} for --node-deployment`', 'cause', 'ours: --node-deployment reads its Node once'],
  ['app/build.ts', 'info', 0, 'Node deployment: acting only on volumes whose node affinity selects this node', 'node', 'ours: --node-deployment'],
  ['app/node-volume-scope.ts', 'info', 0, 'PV has no node affinity; node-local resizers leave it alone', 'pv,node', 'ours: --node-deployment, once per PV'],
  // auto-grow, ours alone (docs/auto-grow.md)
  [
    'app/build/auto-grow.ts',
    'warn',
    0,
    '--auto-grow is set, but this driver cannot expand volumes: auto-grow does not run',
    '',
    'ours: --auto-grow (docs/auto-grow.md)',
  ],
  ['autogrow/controller.ts', 'info', 0, 'Starting auto-grow controller', '<o.settings>', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/controller.ts', 'info', 0, 'Shutting down auto-grow controller', '', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/controller.ts', 'error', 0, 'Cannot sync the caches of the auto-grow controller', '', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/controller.ts', 'error', 0, 'Auto-grow failed; retrying with backoff', 'PVC,err', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/reconcile.ts', 'info', 5, 'Auto-grow: nothing to do', 'PVC,decision,reason', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/reconcile.ts', 'warn', 0, 'Auto-grow policy is invalid', 'PVC,message', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/reconcile.ts', 'info', 5, 'Auto-grow: enough free space', 'PVC,available,threshold', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/reconcile.ts', 'info', 4, 'Auto-grow: waiting for the cooldown', 'PVC,nextGrowAllowedAt', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/reconcile.ts', 'info', 0, 'Auto-grow: the claim is at its limit', 'PVC,limit', 'ours: --auto-grow (docs/auto-grow.md)'],
  [
    'autogrow/reconcile.ts',
    'warn',
    0,
    'Auto-grow: cannot record that the claim is at its limit',
    'PVC,message,retryAt',
    'ours: --auto-grow (docs/auto-grow.md)',
  ],
  ['autogrow/reconcile.ts', 'info', 0, 'Auto-grow dry run: the storage request would be raised', '<fields>', 'ours: --auto-grow (docs/auto-grow.md)'],
  [
    'autogrow/reconcile.ts',
    'info',
    4,
    'Auto-grow: a refused request waits before the next attempt',
    '...fields,retryAt',
    'ours: --auto-grow (docs/auto-grow.md)',
  ],
  [
    'autogrow/reconcile.ts',
    'warn',
    0,
    'Auto-grow: the API server refused the new storage request',
    '...fields,message,retryAt',
    'ours: --auto-grow (docs/auto-grow.md)',
  ],
  ['autogrow/reconcile.ts', 'info', 0, 'Auto-grow raised the storage request', '...fields,available,filesystem', 'ours: --auto-grow (docs/auto-grow.md)'],
  [
    'autogrow/reconcile.ts',
    'info',
    0,
    'Auto-grow: the claim changed since it was read; deciding again from its new version',
    'PVC',
    'ours: --auto-grow (docs/auto-grow.md)',
  ],
  ['autogrow/usage-poll.ts', 'error', 0, 'Auto-grow poll failed', 'err', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/usage-poll.ts', 'info', 4, 'Auto-grow poll', 'candidates,measured,nodes,notMounted,durationMs', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['autogrow/usage-poll.ts', 'warn', 0, 'Cannot read volume usage', 'source,reason,message', 'ours: --auto-grow (docs/auto-grow.md)'],
  ['app/build.ts', 'error', 0, 'Failed to check VolumeAttributesClass V1 API availability', 'err', `${ER} cmd/csi-resizer/main.go:143`],
  ['app/build.ts', 'info', 0, 'VolumeAttributesClass v1 API is available', '', `${ER} cmd/csi-resizer/main.go:145`],
  [
    'app/build.ts',
    'info',
    0,
    'Disabling VolumeAttributesClass feature gate because the VolumeAttributesClass v1 API is not available',
    '',
    `${ER} cmd/csi-resizer/main.go:147`,
  ],
  ['app/build.ts', 'startupError', 1, 'Failed to create CSI client', 'cause', `${ER} cmd/csi-resizer/main.go:163`],
  ['app/build.ts', 'startupError', 1, 'Get driver name failed', 'cause', `${ER} cmd/csi-resizer/main.go:169`],
  ['csi/client.ts', 'info', 2, 'CSI driver name', 'driverName', `${ER} cmd/csi-resizer/main.go:172`],
  ['app/select-backends.ts', 'info', 0, 'Resize not supported', 'message', `${ER} cmd/csi-resizer/main.go:196`],
  ['app/build.ts', 'startupError', 1, 'Failed to create CSI resizer', 'cause', `${ER} cmd/csi-resizer/main.go:198`],
  ['app/select-backends.ts', 'startupError', 1, 'Failed to create CSI resizer', 'cause', `${ER} cmd/csi-resizer/main.go:198 (controller service missing)`],
  ['app/select-backends.ts', 'info', 0, 'Modify not supported', 'message', `${ER} cmd/csi-resizer/main.go:210`],
  ['app/select-backends.ts', 'startupError', 255, 'CSI driver does not support resize nor modify', '', `${ER} cmd/csi-resizer/main.go:217 (klog.Fatalf)`],
  [
    'app/select-backends.ts',
    'info',
    0,
    'The CSI driver supports node resize only, using trivial resizer to handle resize requests',
    '',
    `${ER} pkg/resizer/csi_resizer.go:70`,
  ],
  ['app/process-runner.ts', 'info', 0, 'ServeMux listening', 'address', `${ER} cmd/csi-resizer/main.go:225`],
  ['app/exit.ts', 'error', 0, 'Failed to start HTTP server', 'err,address,metricsPath', `${ER} cmd/csi-resizer/main.go:228`],
  ['app/process-runner.ts', 'infof', 0, 'Received SIGTERM or SIGINT signal, shutting down controller.', '', `${ER} cmd/csi-resizer/main.go:279`],
  ['app/exit.ts', 'fatalf', 0, 'err.message', '', 'relays a StartupError with exit code 255 (klog.Fatalf)'],
  [
    'app/exit.ts',
    'error',
    0,
    'err.message',
    '<err.cause === undefined ? undefined : { err: err.cause }>',
    'relays a StartupError: its fixed message, the cause in err',
  ],
  ['app/build/elector.ts', 'startupError', 1, 'Failed to create leaderelection client', 'cause', `${LIB} leaderelection/leader_election.go:239`],
  [
    'app/build/elector.ts',
    'startupError',
    2,
    'Invalid leader election configuration',
    'cause',
    `ours: ${LIB} panics (RunOrDie) where we log; exit 2 as Go's panic`,
  ],
  ['app/build/elector.ts', 'startupError', 1, 'Invalid leader election configuration', 'cause', 'ours: any other error building the elector'],
  ['app/run.ts', 'warn', 0, 'Ignoring arguments after the flags', 'args', 'ours: Go ignores them silently; a warning helps'],
  ['app/exit.ts', 'info', 0, 'Received second signal, exiting immediately', 'signal', 'ours: a second signal forces the exit'],
  ['app/exit.ts', 'error', 0, 'CSI driver name changed, exiting', 'err', 'ours: upstream exits on any connection loss instead'],
  [
    'app/process-runner.ts',
    'info',
    0,
    'In-flight operations did not finish within --timeout; exiting anyway',
    'timeoutMs',
    'ours: the drain bound (after a signal or a lost Lease)',
  ],
  [
    'app/process-runner.ts',
    'error',
    0,
    'Setting up the process metrics failed',
    'err',
    'ours: the process_* and nodejs_* collectors are set up after start-up',
  ],
  ['app/exit.ts', 'error', 0, 'Controllers stopped unexpectedly', 'err', 'ours: a controller failing outside shutdown'],
  ['app/build/elector.ts', 'info', 0, 'Leader election enabled', 'lease,identity', 'ours: names the lease and identity once'],
  ['app/build/runnable.ts', 'error', 0, 'Component stopped with an error', 'component,err', 'ours: a runnable failing'],
  ['app/permission-check.ts', 'warn', 0, 'Could not check RBAC permissions', 'err', 'ours: the startup RBAC check'],
  ['app/permission-check.ts', 'info', 2, 'RBAC permissions checked', 'rules,missing', 'ours: the startup RBAC check'],
  // A missing rule, said once whoever finds it; the message says what stops (RULE_EFFECTS, pinned below).
  ['app/permission-notices.ts', 'error', 0, 'effect.missing', 'permission', 'ours: the startup RBAC check, a rule whose absence stops resizes'],
  ['app/permission-notices.ts', 'warn', 0, 'effect.missing', 'permission', 'ours: the startup RBAC check, a rule only modify or events need'],
  [
    'app/permission-notices.ts',
    'error',
    0,
    'effect.missing',
    'permission,err',
    `ours: an informer refused (403), once for a run of refusals; ${CG} reflector logs "Failed to watch" per retry`,
  ],
  [
    'app/permission-notices.ts',
    'warn',
    0,
    'effect.missing',
    'permission,err',
    `ours: an informer refused (403) for a rule only modify needs, once; ${CG} reflector logs "Failed to watch" per retry`,
  ],
  ['app/permission-notices.ts', 'info', 0, 'effect.granted', 'permission', 'ours: an informer refused before is accepted again'],

  // CSI connection and probe (csi-lib-utils connection/connection.go, rpc/common.go)
  ['csi/driver-channel.ts', 'info', 5, 'Connecting', 'address', `${LIB} connection/connection.go:234`],
  ['csi/driver-channel.ts', 'info', 0, 'Still connecting', 'address', `${LIB} connection/connection.go:253`],
  [
    'csi/driver-channel.ts',
    'warn',
    0,
    'CSI driver socket cannot be dialled',
    'address,problem',
    'ours: says why the dial fails (docs/deployment.md, "The image user")',
  ],
  ['csi/driver-calls.ts', 'info', 5, 'GRPC call', 'method,request', `${LIB} connection/connection.go:264`],
  ['csi/driver-calls.ts', 'info', 5, 'GRPC response', 'response,err', `${LIB} connection/connection.go:270 (success)`],
  ['csi/driver-calls.ts', 'info', 5, 'GRPC response', 'response,err', `${LIB} connection/connection.go:270 (error)`],
  ['csi/client.ts', 'info', 0, 'Probing CSI driver for readiness', '', `${LIB} rpc/common.go:143`],
  ['csi/client.ts', 'info', 0, 'CSI driver probe timed out', '', `${LIB} rpc/common.go:156`],
  ['csi/client.ts', 'info', 0, 'CSI driver is not ready', '', `${LIB} rpc/common.go:161`],
  ['csi/driver-channel.ts', 'warn', 0, 'Lost connection to CSI driver, reconnecting', 'address', 'ours: we reconnect where upstream exits'],
  ['csi/driver-channel.ts', 'info', 0, 'Reconnected to CSI driver', 'address', 'ours: we reconnect where upstream exits'],
  [
    'csi/driver-channel.ts',
    'warn',
    0,
    'Connection attempt to CSI driver timed out, dialing again',
    'address,timeoutMs',
    'ours: grpc-js waits for the HTTP/2 handshake without a bound',
  ],
  ['csi/driver-channel.ts', 'error', 0, 'CSI connection state listener failed', 'err', 'ours: a listener bug never stops the connection'],
  ['csi/client.ts', 'info', 0, 'CSI driver reconnected, name unchanged', 'driver', 'ours: the name is checked after a reconnect'],
  ['csi/client.ts', 'warn', 0, 'Checking the CSI driver name after reconnecting failed, retrying', 'err', 'ours: the name is checked after a reconnect'],
  ['csi/client.ts', 'error', 0, 'CSI driver can no longer be used', 'err', 'ours: the name changed after a reconnect'],
  ['csi/client.ts', 'error', 0, 'CSI fatal listener failed', 'err', 'ours: a listener bug'],

  // leader election (client-go tools/leaderelection, csi-lib-utils leaderelection)
  ['kube/api/leader-election.ts', 'info', 0, 'Attempting to acquire leader lease...', 'lock', `${CG} tools/leaderelection/leaderelection.go:258`],
  ['kube/api/leader-election.ts', 'info', 4, 'Failed to acquire lease', 'lock', `${CG} tools/leaderelection/leaderelection.go:267`],
  ['kube/api/leader-election.ts', 'info', 0, 'Successfully acquired lease', 'lock', `${CG} tools/leaderelection/leaderelection.go:272`],
  ['kube/api/leader-election.ts', 'info', 5, 'Successfully renewed lease', 'lock', `${CG} tools/leaderelection/leaderelection.go:300`],
  ['kube/api/leader-election.ts', 'info', 0, 'Failed to renew lease', 'lock,err', `${CG} tools/leaderelection/leaderelection.go:304`],
  ['kube/api/leader-election.ts', 'error', 0, 'Failed to release lease', 'err,lock', `${CG} tools/leaderelection/leaderelection.go:341`],
  [
    'kube/api/leader-election.ts',
    'info',
    2,
    'Failed to update lease optimistically, falling back to slow path',
    'lock,err',
    `${CG} tools/leaderelection/leaderelection.go:454`,
  ],
  ['kube/api/leader-election.ts', 'error', 0, 'Error retrieving lease lock', 'err,lock', `${CG} tools/leaderelection/leaderelection.go:461`],
  ['kube/api/leader-election.ts', 'error', 0, 'Error initially creating lease lock', 'err,lock', `${CG} tools/leaderelection/leaderelection.go:465`],
  ['kube/api/leader-election.ts', 'info', 4, 'Lease is held by and has not yet expired', 'lock,holder', `${CG} tools/leaderelection/leaderelection.go:481`],
  ['kube/api/leader-election.ts', 'error', 0, 'Failed to update lease', 'err,lock', `${CG} tools/leaderelection/leaderelection.go:497`],
  [
    'kube/api/leader-election.ts',
    'error',
    0,
    'Lease requests forbidden, retrying quietly until they are allowed',
    'err,lock',
    'ours: elector without an access listener, once per run of refusals (client-go logs each retry)',
  ],
  ['kube/api/leader-election.ts', 'info', 0, 'Lease requests allowed again', 'lock', 'ours: elector without an access listener, after a refusal'],
  ['kube/api/leader-election.ts', 'info', 2, 'became leader, starting', '', `${LIB} leaderelection/leader_election.go:202`],
  ['kube/api/leader-election.ts', 'error', 0, 'Stopped leading', '', `${LIB} leaderelection/leader_election.go:206`],
  ['kube/api/leader-election.ts', 'info', 3, 'New leader detected', 'leader', `${LIB} leaderelection/leader_election.go:210`],
  ['kube/api/leader-election.ts', 'error', 0, 'Leader work failed', 'err', 'ours: the controllers failed while leading'],
  ['kube/api/leader-election.ts', 'error', 0, 'onStoppedLeading failed', 'err', 'ours: a callback bug'],
  ['kube/api/leader-election.ts', 'error', 0, 'onNewLeader failed', 'err', 'ours: a callback bug'],

  // events (client-go tools/record, StartStructuredLogging(0) in both controllers)
  ['kube/api/events.ts', 'info', 0, 'Event occurred', 'object,fieldPath,kind,apiVersion,type,reason,message', `${CG} tools/record/event.go:389`],
  ['kube/api/events.ts', 'warn', 0, 'Failed to write event', 'reason,object,err', 'ours: client-go retries and logs per attempt'],
  [
    'kube/api/events.ts',
    'warn',
    0,
    'Event writes forbidden, dropping events quietly until they are allowed',
    'err',
    'ours: recorder without an access listener, once per run of refusals (client-go logs each rejected event)',
  ],
  ['kube/api/events.ts', 'info', 0, 'Event writes allowed again', '', 'ours: recorder without an access listener, after a refusal'],

  // informers (ours: client-go's reflector lines differ in kind; these say what our informer does)
  ['kube/cache/reflector.ts', 'info', 2, 'Server does not stream initial events; listing instead', 'resource', 'ours: informer'],
  ['kube/cache/reflector.ts', 'info', 2, 'Watch resourceVersion too old, relisting', 'resource', 'ours: informer'],
  ['kube/cache/reflector.ts', 'warn', 0, 'List/watch failed, retrying', 'resource,err,delayMs', 'ours: informer'],
  [
    'kube/cache/reflector.ts',
    'warn',
    0,
    'List/watch forbidden, retrying quietly until it is allowed',
    'resource,err',
    'ours: informer without an access listener, once per run of refusals',
  ],
  ['kube/cache/reflector.ts', 'info', 0, 'List/watch allowed again', 'resource', 'ours: informer without an access listener, after a refusal'],
  [
    'kube/cache/refetcher.ts',
    'warn',
    0,
    'Reading an object again failed, retrying',
    'resource,key,err,delayMs',
    'ours: informer refetch (--node-deployment: a claim whose PV arrived after it)',
  ],
  ['kube/cache/applier.ts', 'info', 2, 'Informer synced', 'resource,objects', 'ours: informer'],
  ['kube/cache/reflector.ts', 'info', 2, 'Watch silent too long, restarting it', 'resource,inactivityMs', 'ours: informer'],
  ['kube/cache/applier.ts', 'error', 0, 'Skipping an object the informer cannot handle', 'resource,key,err', 'ours: malformed objects are skipped, not fatal'],
  ['kube/cache/processor.ts', 'error', 0, 'Informer event handler failed', 'resource,event,key,err', 'ours: a handler bug never stops the informer'],
  ['observability/http-server.ts', 'error', 0, 'Error gathering metric', 'metric,err', 'ours: /metrics'],
  ['observability/http-server.ts', 'error', 0, 'HTTP handler failed', 'path,err', 'ours: /metrics'],
  ['observability/http-server.ts', 'error', 0, 'HTTP server error', 'err', 'ours: /metrics'],

  // workers
  ['queue/workers.ts', 'error', 0, 'Requeue failed', 'key,err', 'ours: a queue bug'],

  // resize controller (pkg/controller)
  ['resize/controller.ts', 'info', 0, 'Register Pod informer for resizer', 'controller', `${ER} pkg/controller/controller.go:136`],
  ['resize/controller.ts', 'info', 0, 'Starting external resizer', 'controller', `${ER} pkg/controller/controller.go:278`],
  ['resize/controller.ts', 'info', 0, 'Shutting down external resizer', 'controller', `${ER} pkg/controller/controller.go:279`],
  ['resize/controller.ts', 'error', 0, 'Cannot sync pod, pv or pvc caches', '', `${ER} pkg/controller/controller.go:288`],
  ['resize/controller.ts', 'error', 0, 'Error syncing PVC', 'err', `${ER} pkg/controller/controller.go:328`],
  ['resize/reconcile.ts', 'info', 4, 'Started PVC processing for resize controller', 'key', `${ER} pkg/controller/controller.go:338`],
  [
    'kube/api/volume-api.ts',
    'info',
    3,
    'PVC is deleted or does not exist',
    'PVC',
    `${ER} pkg/controller/controller.go:351, pkg/modifycontroller/controller.go:273`,
  ],
  [
    'kube/api/volume-api.ts',
    'info',
    4,
    'PV bound to PVC is not created yet',
    'PVC',
    `${ER} pkg/controller/controller.go:361, pkg/modifycontroller/controller.go:280`,
  ],
  ['resize/reconcile.ts', 'info', 4, 'No need to resize PVC', 'PVC', `${ER} pkg/controller/controller.go:386`],
  ['resize/reconcile.ts', 'info', 4, "Resizer doesn't support PV", 'controller,PV', `${ER} pkg/controller/expand_and_recover.go:295`],
  ['resize/reconcile.ts', 'info', 4, 'Persistent volume is not bound to PVC being updated', 'PVC', `${ER} pkg/controller/expand_and_recover.go:300`],
  ['resize/reconcile.ts', 'info', 4, 'Capacity of pv and pvc', 'PV,pvCapacity,PVC,pvcCapacity', `${ER} pkg/controller/controller.go:453`],
  ['resize/reconcile.ts', 'info', 4, 'PV is not a CSI volume, skip it', 'PV', `${ER} pkg/resizer/csi_resizer.go:116`],
  ['resize/reconcile.ts', 'info', 4, 'Skip resize PV', 'PV,resizer', `${ER} pkg/resizer/csi_resizer.go:120`],
  ['resize/reconcile.ts', 'info', 4, 'Skip resize', 'PV,resizer', `${ER} pkg/resizer/trivial_resizer.go:53`],
  ['resize/reconcile.ts', 'info', 4, 'No need to resize', 'PV', `${ER} pkg/controller/expand_and_recover.go:37`],
  ['resize/reconcile.ts', 'warnf', 0, 'Message.oldApiServer', '', `${ER} pkg/controller/expand_and_recover.go:145`],
  ['resize/reconcile.ts', 'infof', 4, 'Message.infeasibleDelay(key)', '', `${ER} pkg/controller/expand_and_recover.go:160`],
  ['resize/reconcile.ts', 'infof', 4, '`skipping updating status for pvc ${key}`', '', `${ER} pkg/controller/expand_and_recover.go:164`],
  ['resize/reconcile.ts', 'info', 4, 'Update capacity of PV succeeded', 'PV,capacity', `${ER} pkg/controller/expand_and_recover.go:199`],
  ['resize/reconcile.ts', 'info', 4, "Resize volume succeeded, start to update PV's capacity", 'PV', `${ER} pkg/controller/expand_and_recover.go:277`],
  [
    'resize/reconcile.ts',
    'info',
    4,
    "Resize volume succeeded, start to update PV's capacity",
    'PV',
    `${ER} pkg/controller/controller.go:628 (updatePVCapacity)`,
  ],
  ['resize/reconcile.ts', 'info', 4, 'Mark PVC as file system resize required', 'PVC', `${ER} pkg/controller/resize_status.go:98`],
  ['resize/reconcile.ts', 'info', 4, 'Resize PVC finished', 'PVC', `${ER} pkg/controller/resize_status.go:194`],

  // modify controller (pkg/modifycontroller)
  [
    'modify/handlers.ts',
    'errorf',
    0,
    '`Get PV ${goQuote(pvName)} of pvc ${goQuote(kObj(before).toString())} in PVInformer cache failed: persistentvolume ${goQuote(pvName)} not found`',
    '',
    `${ER} pkg/modifycontroller/controller.go:177`,
  ],
  ['modify/handlers.ts', 'info', 4, 'Enqueueing PVC for modify', 'PVC', `${ER} pkg/modifycontroller/controller.go:181`],
  ['modify/handlers.ts', 'info', 4, 'No need to modify PVC', 'PVC', `${ER} pkg/modifycontroller/controller.go:184`],
  ['modify/controller.ts', 'error', 0, 'Cannot sync pod, pv, pvc or vac caches', '', `${ER} pkg/modifycontroller/controller.go:198`],
  ['modify/controller.ts', 'error', 0, 'Error syncing PVC', 'err', `${ER} pkg/modifycontroller/controller.go:254`],
  ['modify/controller.ts', 'info', 0, 'Starting external resizer for modify volume', 'controller', `${ER} pkg/modifycontroller/controller.go:215`],
  ['modify/controller.ts', 'info', 0, 'Shutting down external resizer', 'controller', `${ER} pkg/modifycontroller/controller.go:216`],
  ['modify/reconcile.ts', 'info', 4, 'Started PVC processing for modify controller', 'key', `${ER} pkg/modifycontroller/controller.go:263`],
  ['modify/reconcile.ts', 'info', 7, 'Skipping PV provisioned by different driver', 'PV', `${ER} pkg/modifycontroller/controller.go:293`],
  ['modify/reconcile.ts', 'info', 4, 'No need to modify PV', 'PV', `${ER} pkg/modifycontroller/controller.go:303`],
  ['modify/reconcile.ts', 'info', 4, 'stop reconcile for rolled back PVC', 'PV', `${ER} pkg/modifycontroller/modify_volume.go:72 (nothing to cancel)`],
  ['modify/reconcile.ts', 'info', 4, 'stop reconcile for rolled back PVC', 'PV', `${ER} pkg/modifycontroller/modify_volume.go:72 (cancel)`],
  [
    'modify/reconcile.ts',
    'infof',
    4,
    '`Update volumeAttributesClass of PV ${goQuote(pv.metadata.name)} to ${target} succeeded`',
    '',
    `${ER} pkg/modifycontroller/modify_volume.go:161`,
  ],
  ['modify/reconcile.ts', 'infof', 4, 'Message.modifyInfeasibleDelay(key)', '', `${ER} pkg/modifycontroller/modify_volume.go:246`],
];

const SRC = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

function rowOf(call: LogCall): string {
  return JSON.stringify([call.file, call.method, call.level, call.message, call.keys.join(',')]);
}

test('every log call in src/ is in the table: message, keys, level and kind as upstream emits them', () => {
  const found = sources(SRC).flatMap((path) => findLogCalls(relative(SRC, path), readFileSync(path, 'utf8')));
  const expected = TABLE.map(([file, kind, level, message, keys]) => JSON.stringify([file, kind, level, message, keys]));
  const actual = found.map(rowOf);
  const missingFromTable = actual.filter((row) => !expected.includes(row));
  const missingFromCode = expected.filter((row) => !actual.includes(row));
  assert.deepEqual(missingFromTable, [], 'log calls the table does not list (add them with their upstream source)');
  assert.deepEqual(missingFromCode, [], 'table rows no log call matches');
  const count = (rows: string[], row: string) => rows.filter((r) => r === row).length;
  for (const row of new Set(expected)) assert.equal(count(actual, row), count(expected, row), `as many calls as rows: ${row}`);
});

test('what a missing RBAC rule stops, as its log lines say it (ours)', () => {
  assert.deepEqual(Object.fromEntries(Object.entries(RULE_EFFECTS).map(([stops, e]) => [stops, [e.severity, e.missing, e.granted]])), {
    resizes: ['error', 'Missing RBAC permission: resizes will not happen until it is granted', 'RBAC permission granted, resizes starting'],
    modify: ['warn', 'Missing RBAC permission: modify is off until it is granted (resizes are not affected)', 'RBAC permission granted, modify starting'],
    resizesAndModify: [
      'error',
      'Missing RBAC permission: neither resizes nor modifications will happen until it is granted',
      'RBAC permission granted, resizes and modifications starting',
    ],
    events: [
      'warn',
      'Missing RBAC permission: no events are recorded until it is granted (resizes and modifications are not affected)',
      'RBAC permission granted, events recorded again',
    ],
    leading: [
      'error',
      'Missing RBAC permission: this replica cannot lead, so it neither resizes nor modifies until it is granted',
      'RBAC permission granted, this replica may lead',
    ],
    nodeStart: ['error', 'Missing RBAC permission: --node-deployment cannot start until it is granted', 'RBAC permission granted, --node-deployment may start'],
    autoGrow: [
      'warn',
      'Missing RBAC permission: auto-grow will not grow claims until it is granted (see deploy/kubernetes/auto-grow)',
      'RBAC permission granted, auto-grow starting',
    ],
  });
});

test('messages held in constants are upstream texts', () => {
  assert.equal(Message.oldApiServer, 'external-resizer may be running with older version of kubernetes api-server, please upgrade to k8s version 1.32');
  assert.equal(Message.infeasibleDelay('ns/p'), 'skipping volume expansion for pvc ns/p, because expansion previously failed with infeasible error');
  assert.equal(
    Message.modifyInfeasibleDelay('ns/p'),
    'skipping volume modification for pvc ns/p, because modification previously failed with infeasible error',
  );
});
