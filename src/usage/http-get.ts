// The usage sources' HTTP transport: one GET, its answer up to a size bound, over Node's own
// client (node:http, node:https with node:tls), as the API server's transport uses it
// (docs/architecture.md, "The API server's connections"). Kept apart from kube/wire/http.ts because a
// kubelet or Prometheus is not the API server: no token bucket, no watch, no proxy, a TLS
// configuration of its own. Prometheus's connection is kept alive between polls; a kubelet's is
// closed after its answer and its TLS session resumed next time (closingAgent). Failures of the
// wire are classified once, here, so the sources can say which kind of failure a node had.
// The body goes to a reader the caller chooses by the status, piece by piece as it arrives, as the
// bytes came: a kubelet's summary is read without holding it whole and without a string of each
// piece (kubelet-summary.ts); the text readers decode UTF-8 themselves.
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { createSecureContext } from 'node:tls';
import { UsageUnavailable } from './volume-usage.js';

export interface TlsMaterial {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
}

/** Idle keep-alive connections close after this (client-go's idle timeout), so a poll a minute apart reuses them. */
const IDLE_TIMEOUT_MS = 90_000;

/** A keep-alive agent for one set of TLS material; one connection per host is all a poll needs. */
export function keepAliveAgent(protocol: 'http:' | 'https:', tls?: TlsMaterial): http.Agent {
  const common: http.AgentOptions = { keepAlive: true, timeout: IDLE_TIMEOUT_MS, maxSockets: 2, maxFreeSockets: 256, scheduling: 'lifo' };
  if (protocol === 'http:') return new http.Agent(common);
  return new https.Agent({
    ...common,
    // One secure context for every connection: the CA and certificate are parsed once.
    secureContext: createSecureContext({ ca: tls?.ca, cert: tls?.cert, key: tls?.key }),
    rejectUnauthorized: tls?.rejectUnauthorized ?? true,
  });
}

/** TLS sessions kept for resumption: one per node a poll asks, for clusters of up to this many such nodes. */
const KUBELET_SESSIONS = 1024;

/**
 * An agent whose connections close once their answer is read, for the kubelets: a poll asks each
 * node once per interval, and a connection kept open to every one of them holds its TLS state the
 * whole time (docs/performance.md, "Auto-grow"). The TLS sessions are kept, so the next connection
 * to a node resumes its session instead of a full handshake.
 */
export function closingAgent(tls: TlsMaterial): http.Agent {
  return new https.Agent({
    keepAlive: false,
    timeout: IDLE_TIMEOUT_MS,
    maxSockets: 2,
    maxCachedSessions: KUBELET_SESSIONS,
    secureContext: createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key }),
    rejectUnauthorized: tls.rejectUnauthorized,
  });
}

export const WireFailure = {
  /** Refused, unreachable, reset, or a name that does not resolve. */
  Unreachable: 'unreachable',
  /** The server's certificate was not trusted, or the TLS handshake failed. */
  Tls: 'tls',
  /** The answer was larger than the bound. */
  TooLarge: 'tooLarge',
  /** Not HTTP as it should be. */
  Protocol: 'protocol',
} as const;
export type WireFailure = (typeof WireFailure)[keyof typeof WireFailure];

/** Why a source's usage is unavailable when its GET failed this way. */
export function unavailableBecause(failure: WireFailure): UsageUnavailable {
  if (failure === WireFailure.Tls) return UsageUnavailable.Tls;
  if (failure === WireFailure.Unreachable) return UsageUnavailable.Unreachable;
  return UsageUnavailable.BadResponse;
}

export class HttpGetError extends Error {
  constructor(
    readonly failure: WireFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'HttpGetError';
  }
}

/**
 * Takes an answer's body as it arrives, in pieces of bytes (a piece is the reader's only during
 * the call); what it throws fails the GET with that error.
 */
export interface BodyReader<T> {
  write(piece: Buffer): void;
  end(): T;
}

/** The whole body as one string, decoded as UTF-8 (a character split between pieces is decoded whole). */
export function wholeText(): BodyReader<string> {
  const decoder = new StringDecoder('utf8');
  const pieces: string[] = [];
  return { write: (piece) => void pieces.push(decoder.write(piece)), end: () => pieces.join('') + decoder.end() };
}

/** The body's first `max` characters (an error answer, for a message); the rest is dropped as it arrives. */
export function textPrefix(max: number): BodyReader<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  return {
    write: (piece) => {
      if (text.length < max) text += decoder.write(piece).slice(0, max - text.length);
    },
    end: () => (text.length < max ? text + decoder.end().slice(0, max - text.length) : text),
  };
}

export interface GetOptions<T> {
  readonly url: URL;
  readonly agent: http.Agent;
  readonly headers?: Readonly<Record<string, string>>;
  /** The answer's body is refused beyond this many bytes. */
  readonly maxBytes: number;
  /** The reader of the body, chosen by the answer's status. */
  readonly reader: (statusCode: number) => BodyReader<T>;
}

export interface GetAnswer<T> {
  readonly statusCode: number;
  /** What the reader made of the body. */
  readonly body: T;
}

/**
 * One GET. Resolves with any status and what its reader made of the body; rejects with an
 * HttpGetError for a failure of the wire, with the reader's own error, or with the signal's reason
 * once it aborts (a timeout is the caller's signal).
 */
export function httpGet<T>(options: GetOptions<T>, signal: AbortSignal): Promise<GetAnswer<T>> {
  const send = options.url.protocol === 'http:' ? http.request : https.request;
  return new Promise<GetAnswer<T>>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const req = send(options.url, { method: 'GET', agent: options.agent, headers: { accept: 'application/json', ...options.headers } });
    let settled = false;
    const onAbort = () => req.destroy(signal.reason as Error);
    const settle = (outcome: { answer: GetAnswer<T> } | { error: unknown } | { readerError: unknown }) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if ('answer' in outcome) resolve(outcome.answer);
      else if (signal.aborted) reject(signal.reason);
      else reject('readerError' in outcome ? outcome.readerError : classify(outcome.error, options.url));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error) => settle({ error }));
    req.once('response', (res: http.IncomingMessage) => readBody(req, res, options, settle));
    req.end();
  });
}

/** Feeds the body to the status's reader, each chunk as it comes, so no chunk outlives its turn. */
function readBody<T>(
  req: http.ClientRequest,
  res: http.IncomingMessage,
  options: GetOptions<T>,
  settle: (outcome: { answer: GetAnswer<T> } | { error: unknown } | { readerError: unknown }) => void,
): void {
  const statusCode = res.statusCode ?? 0;
  const reader = options.reader(statusCode);
  let length = 0;
  // The rest is not read after a failure: the connection goes, not back to the pool.
  const fail = (outcome: { error: unknown } | { readerError: unknown }) => {
    settle(outcome);
    req.destroy();
  };
  res.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length > options.maxBytes) {
      fail({ error: new HttpGetError(WireFailure.TooLarge, `GET ${shown(options.url)}: the answer is larger than ${options.maxBytes} bytes`) });
      return;
    }
    try {
      reader.write(chunk);
    } catch (readerError) {
      fail({ readerError });
    }
  });
  res.on('error', (error) => settle({ error }));
  res.once('end', () => {
    try {
      settle({ answer: { statusCode, body: reader.end() } });
    } catch (readerError) {
      settle({ readerError });
    }
  });
}

/** The URL without credentials or query, for messages. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|^ERR_TLS_|^ERR_SSL_|EPROTO/;
const UNREACHABLE_CODE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EADDRNOTAVAIL',
]);

function classify(err: unknown, url: URL): unknown {
  if (err instanceof HttpGetError) return err;
  if (!(err instanceof Error)) return err;
  const code = String((err as { code?: unknown }).code ?? '');
  const where = `GET ${shown(url)}`;
  if (TLS_CODE.test(code)) return new HttpGetError(WireFailure.Tls, `${where}: TLS: ${err.message} (${code})`, { cause: err });
  if (UNREACHABLE_CODE.has(code) || err.message === 'socket hang up') {
    return new HttpGetError(WireFailure.Unreachable, `${where}: ${err.message}${code && !err.message.includes(code) ? ` (${code})` : ''}`, { cause: err });
  }
  if (code.startsWith('HPE_')) return new HttpGetError(WireFailure.Protocol, `${where}: malformed HTTP response (${err.message})`, { cause: err });
  return new HttpGetError(WireFailure.Unreachable, `${where}: ${err.message}`, { cause: err });
}
