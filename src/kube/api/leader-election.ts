// Lease-based leader election (coordination.k8s.io/v1), following client-go's leaderelection
// package, which the Go sidecar uses through csi-lib-utils. client-node has no elector and the one
// npm package is tiny and unproven, so we write it: acquire when the lease is free or its holder
// hasn't renewed within leaseDuration *as observed by our own clock* (no cross-node clock
// comparison), renew every retryPeriod, give up leadership when no renewal succeeded within
// renewDeadline, optionally release on exit. Give it its own client (own rate limiter) so
// controller traffic can never starve renewals. A Lease request refused for want of the rule (403)
// is said once (`access`) instead of at every retry, until a try goes through again.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Clock } from '../../base/clock.js';
import { realClock } from '../../base/clock.js';
import { linkedSignal, sleep } from '../../base/signals.js';
import type { Logger } from '../../observability/log/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { KubeClient } from './client.js';
import { isConflict, isNotFound } from './errors.js';
import { RefusalRun, type AccessListener } from './refusals.js';
import type { KubeObject } from '../../model/objects.js';
import { microTime } from '../../model/time.js';

export interface LeaderCallbacks {
  /** Called once leadership is acquired; `signal` aborts when it is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  onStoppedLeading(): void;
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  client: Pick<KubeClient, 'getLease' | 'createLease' | 'updateLease'>;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Put on the lease while we hold it (--leader-election-labels). */
  labels?: Record<string, string>;
  /** On a clean stop, hand the lease back at once instead of letting it expire. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  log: Logger;
  metrics?: Pick<Metrics, 'leaderElectionMasterStatus' | 'leaderElectionSlowpathTotal'>;
  /**
   * client-go's LeaderElectionConfig.Name: the `name` label of the leader_election_* metrics and
   * the lease the health check's error names. csi-lib-utils never sets it, so the Go sidecar
   * reports `name=""`; so do we by default, and dashboards written for it keep matching.
   */
  reportedName?: string;
  clock?: Clock;
  /** Who says that Lease requests are refused (403) and go through again; default: the elector's own log lines. */
  access?: AccessListener;
}

/** client-go's leaderelection.JitterFactor: the renew deadline must exceed 1.2 retry periods. */
export const JITTER_FACTOR = 1.2;

/** A setting client-go's NewLeaderElector refuses (RunOrDie panics on it); its error text. */
export class LeaderElectionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaderElectionConfigError';
  }
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** `external-resizer-<driver>` with every character outside [a-zA-Z0-9-] turned into '-'. */
export function leaseNameForDriver(driverName: string): string {
  return `external-resizer-${sanitizeName(driverName)}`;
}

/** csi-lib-utils' SanitizeName: [^a-zA-Z0-9-] → '-', and a trailing '-' gets an 'X'. */
export function sanitizeName(name: string): string {
  let out = name.replace(/[^a-zA-Z0-9-]/g, '-');
  if (out.endsWith('-')) out += 'X';
  return out;
}

export class LeaderElector {
  private readonly clock: Clock;
  private observedRecord = '';
  /** When we (by our clock) last saw the lease record change or renewed it. */
  private observedTimeMs = 0;
  private observedLease: KubeObject | undefined;
  /** Set by an attempt that found the lease held by another: when it expires by our clock. */
  private heldUntilMs: number | undefined;
  private leader = false;
  private reportedLeader = '';

  /** client-go's and csi-lib-utils' lines, through a logr.Logger upstream (JSON lines carry their level). */
  private readonly log: Logger;
  /** The lock's description in those lines: namespace/name. */
  private readonly lock: string;
  private readonly refusals: RefusalRun;

  constructor(private readonly options: LeaderElectorOptions) {
    this.clock = options.clock ?? realClock;
    this.log = options.log.contextual();
    this.lock = `${options.namespace}/${options.name}`;
    this.refusals = new RefusalRun(
      options.access ?? {
        refused: (err) => this.log.error('Lease requests forbidden, retrying quietly until they are allowed', { err, lock: this.lock }),
        allowed: () => this.log.info('Lease requests allowed again', { lock: this.lock }),
      },
    );
    // NewLeaderElector's checks, in its order and with its texts.
    const refuse = (message: string) => {
      throw new LeaderElectionConfigError(message);
    };
    if (options.leaseDurationMs <= options.renewDeadlineMs) refuse('leaseDuration must be greater than renewDeadline');
    if (options.renewDeadlineMs <= JITTER_FACTOR * options.retryPeriodMs) refuse('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (options.leaseDurationMs < 1e-6) refuse('leaseDuration must be greater than zero');
    if (options.renewDeadlineMs < 1e-6) refuse('renewDeadline must be greater than zero');
    if (options.retryPeriodMs < 1e-6) refuse('retryPeriod must be greater than zero');
    this.setMetric(false);
  }

  private get reportedName(): string {
    return this.options.reportedName ?? '';
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** client-go's HealthzAdaptor: unhealthy only when leading and renewal is overdue beyond tolerance. */
  healthCheck(toleranceMs = 20_000): { ok: true } | { ok: false; message: string } {
    if (!this.leader) return { ok: true };
    if (this.clock.now() > this.observedTimeMs + this.options.leaseDurationMs + toleranceMs) {
      return { ok: false, message: `failed election to renew leadership on lease ${this.reportedName}` };
    }
    return { ok: true };
  }

  /**
   * Acquires, then renews until leadership is lost or the signal aborts. Calls onStoppedLeading
   * once if we ever led. Resolves when done; the caller decides whether losing means exit.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { callbacks } = this.options;
    const log = this.log;
    if (!(await this.acquire(signal))) return;
    const leading = new AbortController();
    const onParentAbort = () => leading.abort(signal.reason);
    signal.addEventListener('abort', onParentAbort, { once: true });
    log.v(2).info('became leader, starting');
    try {
      // Not awaited, like client-go's `go OnStartedLeading(ctx)`: the work watches leading.signal.
      void Promise.resolve()
        .then(() => callbacks.onStartedLeading(leading.signal))
        .catch((err) => {
          log.error('Leader work failed', { err });
        });
      await this.renewLoop(signal);
    } finally {
      signal.removeEventListener('abort', onParentAbort);
      leading.abort(new Error('leadership lost'));
      if (signal.aborted && this.options.releaseOnCancel) await this.release();
      this.leader = false;
      this.setMetric(false);
      log.error('Stopped leading');
      try {
        callbacks.onStoppedLeading();
      } catch (err) {
        log.error('onStoppedLeading failed', { err });
      }
    }
  }

  /**
   * Tries until the lease is ours. A standby is at most one retry period (plus a request's latency)
   * late in seeing a renewal, and wakes when the lease it saw expires by its clock, so it takes a
   * lease its holder stopped renewing within lease duration + one retry period of the last renewal
   * (docs/behavior.md §5.1). client-go waits a retry period plus up to 1.2 of jitter after each
   * attempt ends, which can make it up to two such waits later.
   */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    const { retryPeriodMs } = this.options;
    this.log.info('Attempting to acquire leader lease...', { lock: this.lock });
    while (!signal.aborted) {
      // Attempts start a retry period apart whatever an attempt took, and none takes longer.
      const startedMs = this.clock.now();
      if (await this.tryAcquireOrRenew(signal, retryPeriodMs)) {
        this.leader = true;
        this.setMetric(true);
        this.log.info('Successfully acquired lease', { lock: this.lock });
        return true;
      }
      if (signal.aborted) break;
      this.log.v(4).info('Failed to acquire lease', { lock: this.lock });
      // Held by another: try again when it expires if that comes first (also when it expired while
      // the attempt was under way). Any other failure: a retry period after the attempt started.
      const nextMs = Math.min(startedMs + retryPeriodMs, this.heldUntilMs ?? Infinity);
      await sleep(Math.max(0, nextMs - this.clock.now()), signal, this.clock).catch(() => {});
    }
    return false;
  }

  /** Renews every retryPeriod; returns when a renewal couldn't succeed within renewDeadline or on abort. */
  private async renewLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const deadline = linkedSignal(signal, this.options.renewDeadlineMs, this.clock);
      let renewed = false;
      try {
        while (!deadline.signal.aborted) {
          if (await this.tryAcquireOrRenew(deadline.signal, this.options.renewDeadlineMs)) {
            renewed = true;
            break;
          }
          await sleep(this.options.retryPeriodMs, deadline.signal, this.clock).catch(() => {});
        }
      } finally {
        deadline.dispose();
      }
      if (signal.aborted) return;
      if (!renewed) {
        this.log.info('Failed to renew lease', { lock: this.lock, err: 'context deadline exceeded' });
        return;
      }
      this.log.v(5).info('Successfully renewed lease', { lock: this.lock });
      await sleep(this.options.retryPeriodMs, signal, this.clock).catch(() => {});
    }
  }

  /**
   * One attempt, its requests cut short after `timeoutMs`; true when we hold the lease afterwards.
   * Errors are logged, not thrown.
   */
  private async tryAcquireOrRenew(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const { client, namespace, name, identity } = this.options;
    const log = this.log;
    const now = this.clock.now();
    this.heldUntilMs = undefined;
    const call = linkedSignal(signal, timeoutMs, this.clock);
    let step: 'get' | 'create' | 'update' = 'get';
    try {
      // Fast path (client-go ≥ 1.29): while leading, update the lease we wrote last without a GET.
      // Only while the lease we last saw is ours: after a slow path found another holder, a blind
      // update with that holder's resourceVersion would take the lease back from it.
      if (this.leader && this.observedLease && this.observedHolder() === identity) {
        try {
          const updated = await client.updateLease(namespace, this.leaseWith(this.observedLease, now, 'renew'), call.signal);
          this.observe(updated, now);
          return true;
        } catch (err) {
          this.options.metrics?.leaderElectionSlowpathTotal.inc({ name: this.reportedName });
          log.v(2).info('Failed to update lease optimistically, falling back to slow path', { lock: this.lock, err });
        }
      }

      let current: KubeObject;
      step = 'get';
      try {
        current = await client.getLease(namespace, name, call.signal);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        step = 'create';
        const created = await client.createLease(namespace, this.leaseWith({ metadata: { name, namespace } }, now, 'create'), call.signal);
        this.observe(created, now);
        return true;
      }

      const spec = (current['spec'] ?? {}) as LeaseSpec;
      const record = JSON.stringify(spec);
      if (record !== this.observedRecord) {
        // As client-go: the time we saw the change, once the answer is in (not when we asked, and
        // never the holder's renewTime, which is another node's clock).
        this.observedRecord = record;
        this.observedTimeMs = this.clock.now();
        this.observedLease = current;
      }
      this.reportLeader(spec.holderIdentity ?? '');
      const holder = spec.holderIdentity ?? '';
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (holder !== '' && holder !== identity && this.observedTimeMs + durationMs > now) {
        log.v(4).info('Lease is held by and has not yet expired', { lock: this.lock, holder });
        this.refusals.noteAccepted();
        this.heldUntilMs = this.observedTimeMs + durationMs;
        return false; // held by someone else and not expired by our clock
      }
      step = 'update';
      const updated = await client.updateLease(namespace, this.leaseWith(current, now, holder === identity ? 'renew' : 'takeover'), call.signal);
      this.observe(updated, now);
      return true;
    } catch (err) {
      if (!signal.aborted && !this.refusals.noteError(err)) {
        // client-go's lines for the step that failed
        const failed = step as 'get' | 'create' | 'update';
        if (failed === 'get') log.error('Error retrieving lease lock', { err, lock: this.lock });
        else if (failed === 'create') log.error('Error initially creating lease lock', { err, lock: this.lock });
        else log.error('Failed to update lease', { err, lock: this.lock });
      }
      return false;
    } finally {
      call.dispose();
    }
  }

  private leaseWith(base: KubeObject, nowMs: number, mode: 'create' | 'renew' | 'takeover'): KubeObject {
    const spec = (base['spec'] ?? {}) as LeaseSpec;
    const alreadyHolder = mode === 'renew';
    const nextSpec: LeaseSpec = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.round(this.options.leaseDurationMs / 1000),
      acquireTime: alreadyHolder && spec.acquireTime ? spec.acquireTime : microTime(nowMs),
      renewTime: microTime(nowMs),
      // As client-go: every takeover by a non-leader counts, a fresh lease starts at 0.
      leaseTransitions: mode === 'takeover' ? (spec.leaseTransitions ?? 0) + 1 : (spec.leaseTransitions ?? 0),
    };
    const labels = { ...(base.metadata?.labels ?? {}), ...(this.options.labels ?? {}) };
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      ...base,
      metadata: { ...base.metadata, name: base.metadata?.name ?? this.options.name, ...(Object.keys(labels).length ? { labels } : {}) },
      spec: nextSpec,
    };
  }

  private observedHolder(): string {
    return ((this.observedLease?.['spec'] ?? {}) as LeaseSpec).holderIdentity ?? '';
  }

  private observe(lease: KubeObject, nowMs: number): void {
    this.observedLease = lease;
    this.observedRecord = JSON.stringify(lease['spec'] ?? {});
    this.observedTimeMs = nowMs;
    this.reportLeader(this.options.identity);
    this.refusals.noteAccepted();
  }

  /** Gives the lease back: empty holder, 1 s duration, so another replica takes over at once. */
  private async release(): Promise<void> {
    const observed = this.observedLease;
    if (!observed || !this.leader) return;
    const { client, namespace, name, identity } = this.options;
    const log = this.log;
    const call = linkedSignal(new AbortController().signal, this.options.renewDeadlineMs, this.clock);
    const released = (lease: KubeObject): KubeObject => {
      const now = microTime(this.clock.now());
      const spec = (lease['spec'] ?? {}) as LeaseSpec;
      return { ...lease, spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now } };
    };
    try {
      try {
        await client.updateLease(namespace, released(observed), call.signal);
      } catch (err) {
        // A renewal cut short by the shutdown may have landed on the server after all, leaving our
        // copy one resourceVersion behind: read the lease and release it if it is still ours.
        if (!isConflict(err)) throw err;
        const current = await client.getLease(namespace, name, call.signal);
        if (((current['spec'] ?? {}) as LeaseSpec).holderIdentity !== identity) return;
        await client.updateLease(namespace, released(current), call.signal);
      }
    } catch (err) {
      log.error('Failed to release lease', { err, lock: this.lock });
    } finally {
      call.dispose();
    }
  }

  private reportLeader(identity: string): void {
    if (identity === '' || identity === this.reportedLeader) return;
    this.reportedLeader = identity;
    this.log.v(3).info('New leader detected', { leader: identity });
    try {
      this.options.callbacks.onNewLeader?.(identity);
    } catch (err) {
      this.log.error('onNewLeader failed', { err });
    }
  }

  private setMetric(leading: boolean): void {
    this.options.metrics?.leaderElectionMasterStatus.set({ name: this.reportedName }, leading ? 1 : 0);
  }
}

export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The Lease namespace: the flag, else POD_NAMESPACE, else the service account's namespace, else "default". */
export function leaseNamespace(
  flag: string,
  env: NodeJS.ProcessEnv = process.env,
  readNamespaceFile: () => string = () => readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8'),
): string {
  if (flag !== '') return flag;
  const fromEnv = env['POD_NAMESPACE'];
  if (fromEnv) return fromEnv;
  try {
    const fromFile = readNamespaceFile().trim();
    if (fromFile !== '') return fromFile;
  } catch {
    // not in a pod
  }
  return 'default';
}

/**
 * The elector's identity: the sanitized hostname, as the Go sidecar (in a pod, the pod name).
 * CSI_RESIZER_LEADER_ELECTION_IDENTITY overrides it, for several replicas on one host.
 */
export function leaderIdentity(env: NodeJS.ProcessEnv = process.env, hostname: () => string = os.hostname): string {
  const override = env['CSI_RESIZER_LEADER_ELECTION_IDENTITY'];
  return sanitizeName(override && override !== '' ? override : hostname());
}
