// Client-side throttling of API requests (--kube-api-qps / --kube-api-burst), written here
// because @kubernetes/client-node 1.4.0 has none: the flags read as client-go reads a
// rest.Config's QPS and Burst, for the token bucket (base/token-bucket.ts) in kube/wire/http.ts.

/** client-go's rest.DefaultQPS and rest.DefaultBurst, used where a rest.Config leaves them 0. */
export const DEFAULT_CLIENT_QPS = 5;
export const DEFAULT_CLIENT_BURST = 10;

export class ClientRateLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientRateLimitError';
  }
}

/**
 * The limiter client-go builds from a rest.Config's QPS and Burst (the Go sidecar's
 * --kube-api-qps and --kube-api-burst), in TokenBucket's terms (qps 0 = no limiter):
 * - QPS is a float32, so tiny values become 0 and huge ones +Inf;
 * - QPS > 0 needs Burst > 0, else kubernetes.NewForConfig fails with the error thrown here;
 * - QPS 0 means 5, Burst 0 means 10 (rest.RESTClientFor);
 * - a negative or NaN QPS means no client-side limiter, whatever the burst; +Inf QPS too.
 * One case is refused here where client-go is not: QPS 0 with a negative Burst builds a limiter
 * that refuses every request ("rate: Wait(n=1) exceeds limiter's burst"), so we fail at startup.
 */
export function clientRateLimit(qpsFlag: number, burst: number): { qps: number; burst: number } {
  const qps = Math.fround(qpsFlag);
  if (qps > 0 && burst <= 0) {
    throw new ClientRateLimitError('burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0');
  }
  if (qps === 0) {
    if (burst < 0)
      throw new ClientRateLimitError(
        `--kube-api-burst ${burst} with --kube-api-qps 0 (client-go's default of 5) would refuse every request; use a burst of 0 or more`,
      );
    return { qps: DEFAULT_CLIENT_QPS, burst: burst === 0 ? DEFAULT_CLIENT_BURST : burst };
  }
  if (!(qps > 0) || qps === Infinity) return { qps: 0, burst: Math.max(1, burst) };
  return { qps, burst };
}
