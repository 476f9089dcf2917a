// The usage sources' HTTP transport: one GET, its whole answer up to a size bound, over Node's
// own client (node:http, node:https with node:tls), as the API server's transport uses it
// (docs/architecture.md, "The API server's connections"). Kept apart from kube/wire/http.ts because a
// kubelet or Prometheus is not the API server: no token bucket, no watch, no proxy, a TLS
// configuration of its own. Keep-alive agents let the next poll reuse the connection; failures
// of the wire are classified once, here, so the sources can say which kind of failure a node had.
import http from 'node:http';
import https from 'node:https';
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

export interface GetOptions {
  readonly url: URL;
  readonly agent: http.Agent;
  readonly headers?: Readonly<Record<string, string>>;
  /** The answer's body is refused beyond this many bytes. */
  readonly maxBytes: number;
}

export interface GetAnswer {
  readonly statusCode: number;
  readonly body: Buffer;
}

/**
 * One GET. Resolves with any status and its body; rejects with an HttpGetError for a failure of
 * the wire, or with the signal's reason once it aborts (a timeout is the caller's signal).
 */
export function httpGet(options: GetOptions, signal: AbortSignal): Promise<GetAnswer> {
  const send = options.url.protocol === 'http:' ? http.request : https.request;
  return new Promise<GetAnswer>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const req = send(options.url, { method: 'GET', agent: options.agent, headers: { accept: 'application/json', ...options.headers } });
    let settled = false;
    const onAbort = () => req.destroy(signal.reason as Error);
    const settle = (outcome: { answer: GetAnswer } | { error: unknown }) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if ('answer' in outcome) resolve(outcome.answer);
      else reject(signal.aborted ? signal.reason : classify(outcome.error, options.url));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error) => settle({ error }));
    req.once('response', (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let length = 0;
      res.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > options.maxBytes) {
          settle({ error: new HttpGetError(WireFailure.TooLarge, `GET ${shown(options.url)}: the answer is larger than ${options.maxBytes} bytes`) });
          // The rest is not read: the connection goes, not back to the pool.
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error) => settle({ error }));
      res.once('end', () => settle({ answer: { statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks, length) } }));
    });
    req.end();
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
