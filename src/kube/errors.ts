// One error type for every failed API call. The API server answers failures with a Status object
// ({reason, message, code}); we classify it once here so callers branch on `reason`/`status` and
// never parse response bodies or messages. Raw bodies are not kept (they can echo request data).

export const StatusReason = {
  Conflict: 'Conflict',
  NotFound: 'NotFound',
  Gone: 'Gone',
  Expired: 'Expired',
  Invalid: 'Invalid',
  Forbidden: 'Forbidden',
  Unauthorized: 'Unauthorized',
  AlreadyExists: 'AlreadyExists',
  TooManyRequests: 'TooManyRequests',
  BadRequest: 'BadRequest',
  UnsupportedMediaType: 'UnsupportedMediaType',
  InternalError: 'InternalError',
  ServiceUnavailable: 'ServiceUnavailable',
  Timeout: 'Timeout',
  Unknown: 'Unknown',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

/** The reason implied by an HTTP status when the body carries none. */
export function reasonForStatus(status: number): StatusReason {
  switch (status) {
    case 400: return StatusReason.BadRequest;
    case 401: return StatusReason.Unauthorized;
    case 403: return StatusReason.Forbidden;
    case 404: return StatusReason.NotFound;
    case 409: return StatusReason.Conflict;
    case 410: return StatusReason.Gone;
    case 415: return StatusReason.UnsupportedMediaType;
    case 422: return StatusReason.Invalid;
    case 429: return StatusReason.TooManyRequests;
    case 500: return StatusReason.InternalError;
    case 503: return StatusReason.ServiceUnavailable;
    case 504: return StatusReason.Timeout;
    default: return StatusReason.Unknown;
  }
}

export class KubeApiError extends Error {
  constructor(
    /** HTTP status code (or the `code` of a watch ERROR event). */
    readonly status: number,
    /** Status.reason from the server, or one derived from the HTTP status. */
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'KubeApiError';
  }

  /** Builds the error from a decoded Status body (or anything else the server sent). */
  static fromStatus(httpStatus: number, body: unknown, what: string): KubeApiError {
    const status = (body ?? {}) as { reason?: unknown; message?: unknown; code?: unknown };
    const code = typeof status.code === 'number' && status.code > 0 ? status.code : httpStatus;
    const reason = typeof status.reason === 'string' && status.reason !== '' ? status.reason : reasonForStatus(code);
    const message = typeof status.message === 'string' && status.message !== '' ? status.message : `HTTP ${httpStatus}`;
    return new KubeApiError(code, reason, `${what}: ${message}`);
  }
}

function apiError(err: unknown): KubeApiError | undefined {
  return err instanceof KubeApiError ? err : undefined;
}

export const isConflict = (err: unknown): boolean => apiError(err)?.status === 409;
export const isNotFound = (err: unknown): boolean => apiError(err)?.status === 404;
export const isAlreadyExists = (err: unknown): boolean =>
  apiError(err)?.status === 409 && apiError(err)?.reason === StatusReason.AlreadyExists;
/** 410 Gone or reason Expired: the requested resourceVersion is too old; relist. */
export const isGone = (err: unknown): boolean =>
  apiError(err)?.status === 410 || apiError(err)?.reason === StatusReason.Expired;
export const isInvalid = (err: unknown): boolean => apiError(err)?.status === 422;
export const isForbidden = (err: unknown): boolean => apiError(err)?.status === 403;
