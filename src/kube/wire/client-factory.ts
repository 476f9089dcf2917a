// The one way the API server's clients are made, for the sidecar (its controllers, its RBAC check,
// its elector) and for the read-only subcommands (doctor, explain): one client configuration
// (kubeconfig, --master or in-cluster), one rate-limit rule (--kube-api-qps/--kube-api-burst as
// client-go reads them, rate-limiter.ts) and a User-Agent naming who asks. Each client has its own
// token bucket, so no purpose takes the tokens another needs. What a new client needs (a metrics
// port, say) goes into the factory's options once and reaches every client.
import type { RestClientMetrics } from '../../observability/rest-client.js';
import { HttpKubeClient } from './http-client.js';
import { loadKubeConfig, type ClientConfig } from './kubeconfig.js';
import { clientRateLimit } from './rate-limiter.js';

/** The flags a client is made from (the sidecar's and the subcommands' Config has them). */
export interface ApiClientFlags {
  readonly kubeconfig: string;
  readonly master: string;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
}

/** Who a client is for: it names the client in the User-Agent and sets its smallest burst. */
export const ClientPurpose = {
  Controllers: 'controllers',
  PermissionCheck: 'permission-check',
  LeaderElection: 'leader-election',
  Doctor: 'doctor',
  Explain: 'explain',
} as const;
export type ClientPurpose = (typeof ClientPurpose)[keyof typeof ClientPurpose];

/**
 * The smallest burst of each purpose. The RBAC check and the subcommands send a dozen reviews and
 * reads at once and then nothing, so a burst of 20 lets them finish without waiting on the QPS.
 */
const MIN_BURST: Readonly<Record<ClientPurpose, number>> = {
  controllers: 0,
  'permission-check': 20,
  'leader-election': 0,
  doctor: 20,
  explain: 20,
};

export interface ApiClientFactoryOptions {
  /** The version the controllers' client names in its User-Agent (`csi-resizer/<version>`). */
  readonly version?: string;
  /** Where the proxy variables are read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** Where every client records client-go's rest_client_* metrics (one registry, as client-go's globals); none for the subcommands. */
  readonly metrics?: RestClientMetrics;
}

export class ApiClientFactory {
  private constructor(
    /** The client configuration every client is made from (the kubelet usage source authenticates with it too). */
    readonly clientConfig: ClientConfig,
    private readonly rateLimit: { qps: number; burst: number },
    private readonly options: ApiClientFactoryOptions,
  ) {}

  /**
   * Reads the client configuration, then the rate-limit flags. Rejects with the configuration's
   * error, or with a ClientRateLimitError for flags client-go refuses.
   */
  static async load(flags: ApiClientFlags, options: ApiClientFactoryOptions = {}): Promise<ApiClientFactory> {
    const clientConfig = await loadKubeConfig({ kubeconfigPath: flags.kubeconfig, masterUrl: flags.master });
    return new ApiClientFactory(clientConfig, clientRateLimit(flags.kubeApiQps, flags.kubeApiBurst), options);
  }

  /** A new client for `purpose`, with a rate limiter of its own. Throws for a proxy setting that cannot be used. */
  create(purpose: ClientPurpose): HttpKubeClient {
    const { env, version, metrics } = this.options;
    return new HttpKubeClient({
      kubeConfig: this.clientConfig,
      qps: this.rateLimit.qps,
      burst: Math.max(this.rateLimit.burst, MIN_BURST[purpose]),
      userAgent: `csi-resizer/${purpose === ClientPurpose.Controllers ? (version ?? 'unknown') : purpose}`,
      ...(env ? { env } : {}),
      ...(metrics ? { metrics } : {}),
    });
  }
}
