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
    case 400:
      return StatusReason.BadRequest;
    case 401:
      return StatusReason.Unauthorized;
    case 403:
      return StatusReason.Forbidden;
    case 404:
      return StatusReason.NotFound;
    case 409:
      return StatusReason.Conflict;
    case 410:
      return StatusReason.Gone;
    case 415:
      return StatusReason.UnsupportedMediaType;
    case 422:
      return StatusReason.Invalid;
    case 429:
      return StatusReason.TooManyRequests;
    case 500:
      return StatusReason.InternalError;
    case 503:
      return StatusReason.ServiceUnavailable;
    case 504:
      return StatusReason.Timeout;
    default:
      return status >= 500 ? StatusReason.InternalError : StatusReason.Unknown;
  }
}

/** Which call failed: kept on the error for logs, never in its message. */
export interface RequestInfo {
  method: string;
  /** API path such as /api/v1/namespaces/ns/persistentvolumeclaims/name/status. */
  path: string;
}

export class KubeApiError extends Error {
  constructor(
    /** HTTP status code (or the `code` of a watch ERROR event). */
    readonly status: number,
    /** Status.reason from the server, or one derived from the HTTP status. */
    readonly reason: string,
    /** What client-go's error says: the API server's Status message, e.g. `persistentvolumeclaims "x" not found`. */
    message: string,
    /** Our request context for logs, e.g. `PATCH /api/v1/namespaces/ns/persistentvolumeclaims/x/status`. */
    readonly request = '',
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'KubeApiError';
  }

  /**
   * Builds the error from the server's answer. A Status body's message is the error's message,
   * as client-go's StatusError reads. Without one (a proxy's text page, an empty body) the message
   * is client-go's generic text for the code, e.g. `the server could not find the requested
   * resource (patch persistentvolumeclaims x)`.
   */
  static fromStatus(httpStatus: number, body: unknown, request: RequestInfo | string, text = ''): KubeApiError {
    const status = (body ?? {}) as { reason?: unknown; message?: unknown; code?: unknown; kind?: unknown };
    const code = typeof status.code === 'number' && status.code > 0 ? status.code : httpStatus;
    const reason = typeof status.reason === 'string' && status.reason !== '' ? status.reason : reasonForStatus(code);
    const described = typeof request === 'string' ? request : `${request.method} ${request.path}`;
    if (typeof status.message === 'string' && status.message !== '') {
      return new KubeApiError(code, reason, status.message, described);
    }
    const serverMessage = typeof body === 'string' ? body : text.trim();
    return new KubeApiError(code, reason, genericMessage(code, serverMessage, typeof request === 'string' ? undefined : request), described);
  }
}

/** client-go's NewGenericServerResponse text for an answer without a Status message. */
function genericMessage(code: number, serverMessage: string, request: RequestInfo | undefined): string {
  let message: string;
  switch (code) {
    case 409:
      message = 'the server reported a conflict';
      break;
    case 404:
      message = 'the server could not find the requested resource';
      break;
    case 400:
      message = 'the server rejected our request for an unknown reason';
      break;
    case 401:
      message = 'the server has asked for the client to provide credentials';
      break;
    case 403:
      message = serverMessage;
      break;
    case 406:
      message =
        serverMessage === '' || serverMessage === 'unknown' ? 'the server was unable to respond with a content type that the client supports' : serverMessage;
      break;
    case 415:
      message = serverMessage;
      break;
    case 405:
      message = 'the server does not allow this method on the requested resource';
      break;
    case 422:
      message = 'the server rejected our request due to an error in our request';
      break;
    case 503:
      message = 'the server is currently unable to handle the request';
      break;
    case 504:
      message = 'the server was unable to return a response in the time allotted, but may still be processing the request';
      break;
    case 429:
      message = 'the server has received too many requests and has asked us to try again later';
      break;
    default:
      message =
        code >= 500
          ? `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`
          : `the server responded with the status code ${code} but did not return more information`;
  }
  const target = request ? resourceOf(request.path) : undefined;
  if (!target || !request) return message;
  return target.name
    ? `${message} (${request.method.toLowerCase()} ${target.resource} ${target.name})`
    : `${message} (${request.method.toLowerCase()} ${target.resource})`;
}

/** The resource and object name an API path addresses (subresources aside), as client-go knows them. */
function resourceOf(path: string): { resource: string; name: string | undefined } | undefined {
  const parts = path
    .split('?')[0]!
    .split('/')
    .filter((p) => p !== '');
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length >= 3) rest = parts.slice(3);
  else return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const resource = rest[0];
  return resource ? { resource, name: rest[1] } : undefined;
}

function apiError(err: unknown): KubeApiError | undefined {
  return err instanceof KubeApiError ? err : undefined;
}

export const isConflict = (err: unknown): boolean => apiError(err)?.status === 409;
export const isNotFound = (err: unknown): boolean => apiError(err)?.status === 404;
/** 410 Gone or reason Expired: the requested resourceVersion is too old; relist. */
export const isGone = (err: unknown): boolean => apiError(err)?.status === 410 || apiError(err)?.reason === StatusReason.Expired;
export const isForbidden = (err: unknown): boolean => apiError(err)?.status === 403;
