// What every controller is built from: the shared informers, the volume API, the KeyLock that
// keeps two controllers off one claim at a time, and the parts each controller has its own of,
// made alike: a queue named `<driver>-pvc` with the --retry-interval-* backoff, a slow set, and an
// event recorder (upstream's controllers each have their own broadcaster, so their event
// correlation and spam budgets are separate; no source.host, upstream names only the component).
// The kit owns those parts' lifetimes: App.run starts and stops the slow sets, App.close closes
// the recorders.
import type { Clock } from '../../base/clock.js';
import type { Config } from '../../flags/config.js';
import type { FeatureGates } from '../../flags/feature-gates.js';
import type { HttpKubeClient } from '../../kube/wire/http-client.js';
import { ApiEventRecorder, type EventRecorder } from '../../kube/api/events.js';
import type { AccessListener } from '../../kube/api/refusals.js';
import { volumeApi, type VolumeApi } from '../../kube/api/volume-api.js';
import type { VolumeScope } from '../../model/volume-scope.js';
import type { Logger } from '../../observability/log/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { KeyLock } from '../../queue/key-lock.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '../../queue/rate-limiters.js';
import { SlowSet } from '../../queue/slow-set.js';
import type { InformerSet } from './informers.js';

export interface ControllerKitOptions {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The controllers' API client: events, secrets, and the volume API's patches. */
  readonly kube: HttpKubeClient;
  readonly driverName: string;
  readonly gates: FeatureGates;
  readonly scope: VolumeScope;
  readonly informers: InformerSet;
  /** Who says that event writes are refused for want of the events rule, and allowed again. */
  readonly eventAccess?: AccessListener;
}

export class ControllerKit {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly kube: HttpKubeClient;
  readonly driverName: string;
  readonly gates: FeatureGates;
  readonly scope: VolumeScope;
  readonly informers: InformerSet;
  readonly api: VolumeApi;
  readonly keyLock = new KeyLock();
  readonly metrics: Metrics;
  private readonly slowSets: SlowSet<string>[] = [];
  private readonly recorders: ApiEventRecorder[] = [];
  private readonly eventAccess: AccessListener | undefined;

  constructor(options: ControllerKitOptions) {
    this.config = options.config;
    this.clock = options.clock;
    this.log = options.log;
    this.metrics = options.metrics;
    this.kube = options.kube;
    this.driverName = options.driverName;
    this.gates = options.gates;
    this.scope = options.scope;
    this.informers = options.informers;
    this.api = volumeApi(options.kube);
    this.eventAccess = options.eventAccess;
  }

  /** A controller's work queue: named `<driver>-pvc`, per-key backoff from --retry-interval-start to --retry-interval-max. */
  newQueue(): RateLimitingQueue<string> {
    const { retryIntervalStartMs, retryIntervalMaxMs } = this.config;
    return new RateLimitingQueue<string>({
      name: `${this.driverName}-pvc`,
      clock: this.clock,
      metrics: this.metrics.workqueue,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: retryIntervalStartMs, maxDelayMs: retryIntervalMaxMs }),
    });
  }

  /** A controller's slow set (infeasible keys, kept --retry-interval-max); runs while App.run runs. */
  newSlowSet(): SlowSet<string> {
    const slowSet = new SlowSet<string>({ retentionMs: this.config.retryIntervalMaxMs, clock: this.clock });
    this.slowSets.push(slowSet);
    return slowSet;
  }

  /** A controller's event recorder; closed by close(). */
  newEventRecorder(): EventRecorder {
    const recorder = new ApiEventRecorder({
      client: this.kube,
      component: `external-resizer ${this.driverName}`,
      log: this.log,
      ...(this.eventAccess ? { access: this.eventAccess } : {}),
    });
    this.recorders.push(recorder);
    return recorder;
  }

  startSlowSets(): void {
    for (const set of this.slowSets) set.start();
  }

  stopSlowSets(): void {
    for (const set of this.slowSets) set.stop();
  }

  /** Closes the event recorders. */
  close(): void {
    for (const recorder of this.recorders) recorder.close();
  }
}
