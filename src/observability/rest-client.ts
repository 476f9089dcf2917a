// The port the API client (kube/wire/http.ts, kube/wire/credentials.ts) reports its requests through: what
// client-go hands its tools/metrics adapters (docs/behavior.md §5.3, "REST client"), in the
// client's own terms. Plain interfaces and a recorder that records nothing, so the wire code never
// loads the metrics library; rest-client-metrics.ts implements them on the registry.

/** How an exec credential plugin's run ended, as client-go labels it (call_status). */
export const ExecCallStatus = {
  NoError: 'no_error',
  PluginExecutionError: 'plugin_execution_error',
  PluginNotFoundError: 'plugin_not_found_error',
  ClientInternalError: 'client_internal_error',
} as const;
export type ExecCallStatus = (typeof ExecCallStatus)[keyof typeof ExecCallStatus];

/** What reading a CA file again found, as client-go names the reason (its result follows from it). */
export const CaReloadReason = {
  Updated: 'updated',
  Unchanged: 'unchanged',
  ReadError: 'read_error',
  Empty: 'empty',
  ParseError: 'ca_parse_error',
} as const;
export type CaReloadReason = (typeof CaReloadReason)[keyof typeof CaReloadReason];

/** One verb's requests of one client (one object per verb, kept by the client for every request). */
export interface VerbRecorder {
  /** Time spent waiting for the client-side rate limiter before a request. */
  rateLimiterWait(seconds: number): void;
  /** A whole request: the limiter's wait, every attempt, and reading the answer. */
  latency(seconds: number): void;
  /** The body sent by one attempt (0 without one). */
  requestSize(bytes: number): void;
  /** The body of a request's final answer. */
  responseSize(bytes: number): void;
  /**
   * One attempt on the wire ended: its HTTP status, or undefined when no answer arrived (`<error>`).
   * `isRetry` for an attempt after the first of the same request.
   */
  attempt(status: number | undefined, isRetry: boolean): void;
}

/** What credential resolution reports (kube/wire/credentials.ts). */
export interface CredentialEvents {
  /** An exec credential plugin ran; exitCode 0 only for no_error. */
  execPluginCall(exitCode: number, status: ExecCallStatus): void;
}

/** One API client (one KubeHttp): its requests and its credentials. */
export interface RestClientRecorder extends CredentialEvents {
  forVerb(verb: string): VerbRecorder;
  /** The client read its CA file again (not its first read, which built its connections). */
  caReload(reason: CaReloadReason): void;
  /** The exec plugin's client certificate changed; the one replaced had lived this long. */
  execCertificateRotated(ageSeconds: number): void;
  /** When this client's exec plugin certificate expires (ms since the epoch); undefined: it has none. */
  execCertificateExpiry(notAfterMs: number | undefined): void;
  /** The client is closed: its certificate no longer counts. Safe to call twice. */
  close(): void;
}

/** Where every API client of the process records (one per registry, as client-go's globals). */
export interface RestClientMetrics {
  /** A new client of the server at `host` (the server URL's host:port, as written). */
  client(host: string): RestClientRecorder;
}

const ignoreVerb: VerbRecorder = {
  rateLimiterWait() {},
  latency() {},
  requestSize() {},
  responseSize() {},
  attempt() {},
};

const ignoreClient: RestClientRecorder = {
  forVerb: () => ignoreVerb,
  execPluginCall() {},
  caReload() {},
  execCertificateRotated() {},
  execCertificateExpiry() {},
  close() {},
};

/** For clients whose process serves no metrics (doctor, explain, tests). */
export const noRestClientMetrics: RestClientMetrics = { client: () => ignoreClient };
