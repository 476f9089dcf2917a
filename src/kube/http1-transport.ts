// The transport of the request layer, ordinary calls and watches: HTTP/1.1 written and parsed
// by us over keep-alive `tls.connect` (or, for an http:// server, `net.connect`) sockets.
// Why our own: after the layer's own costs were cut, node:https's machinery (Agent, ClientRequest/
// OutgoingMessage, IncomingMessage streams, llhttp callbacks) was about 40 % of the sidecar's CPU
// through a resize burst. A request here is one string written in one write, and a response is
// read by a small parser (http1-parser.ts) into one Buffer: `bench/rawhttp-probe.ts` measured a
// minimal version of this client at 191 against 338 µs of client CPU per GET/PATCH through the
// layer (0.57; 4000 requests × 5 rounds alternating against a real kube-apiserver). HTTP/2 was
// measured before and saved nothing (README, Performance).
// What node's keep-alive agent gave us and this keeps: a LIFO pool of idle sockets (unref'd while
// idle, dropped when the server closes them), TCP_NODELAY and TCP keep-alive, one SecureContext and
// a resumed TLS session for every connection, SNI and the certificate's hostname checked by
// tls.connect (tls.checkServerIdentity) unless verification is off, a connection closed when the
// server says `Connection: close`. A request that finds its reused socket closed by the server
// before any byte of the answer arrived is a stale socket: a GET is sent again on a new connection
// (what Go's transport does for idempotent requests); any other method fails with node's
// "socket hang up" (ECONNRESET), as it did through node's agent.
// A watch (`stream`) resolves once the response head is read; its body is then an async iterable
// of the decoded body bytes as they arrive (no IncomingMessage, no stream machinery), and the
// connection goes back to the pool once the server ends the body. Watches get a pool of their own
// (KubeHttp keeps two, sharing one SecureContext and TLS session), so a watch holding its socket for
// minutes never takes the socket the next ordinary request would reuse.
import net from 'node:net';
import tls from 'node:tls';
import { Http1ResponseParser, type Http1Response } from './http1-parser.js';

export type { Http1Response } from './http1-parser.js';

/** The latest TLS session the server gave a client's connections, shared with the watch pool. */
export interface TlsSessions {
  latest?: Buffer;
}

export interface Http1PoolOptions {
  /** Without IPv6 brackets. */
  hostname: string;
  port: number;
  /** Absent for an http:// server. */
  tls?: {
    secureContext: tls.SecureContext;
    rejectUnauthorized: boolean;
    /** SNI and the name checked against the certificate; defaults to the hostname unless it is an IP. */
    servername?: string;
    sessions: TlsSessions;
  };
}

/** Idle sockets kept at most (node's agent default maxFreeSockets). */
const MAX_IDLE = 256;
/** node's agent default keepAliveMsecs: TCP keep-alive probes on pooled sockets. */
const TCP_KEEPALIVE_MS = 1000;

/** A watch body's socket stops reading while this many bytes wait for the consumer... */
const STREAM_HIGH_WATER = 256 * 1024;
/** ...and reads again once they are down to this many. */
const STREAM_LOW_WATER = 64 * 1024;

/** An error as node's http client reports a connection that closed before the answer. */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** One keep-alive connection and the exchange in flight on it, if any. */
class Connection {
  private parser: Http1ResponseParser | undefined;
  private settle: ((err: Error | undefined, res?: Http1Response) => void) | undefined;
  /** Completed exchanges on this socket: a socket with one or more is a reused one. */
  exchanges = 0;
  closed = false;

  constructor(readonly socket: net.Socket, private readonly pool: Http1Pool) {
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('end', () => this.onEnd());
    socket.on('error', (err: Error) => this.onClose(err));
    socket.on('close', () => this.onClose(undefined));
  }

  /** Writes the request and settles once the parser has read the whole response (or it failed). */
  exchange(request: string, parser: Http1ResponseParser, settle: (err: Error | undefined, res?: Http1Response) => void): void {
    this.parser = parser;
    this.settle = settle;
    this.socket.ref();
    this.socket.write(request);
  }

  destroy(err?: Error): void {
    this.closed = true;
    this.socket.destroy(err);
  }

  private onData(data: Buffer): void {
    const parser = this.parser;
    if (parser === undefined) {
      // Nothing was asked: the connection is out of step with the server.
      this.destroy();
      return;
    }
    let res: Http1Response | undefined;
    try {
      res = parser.push(data);
    } catch (err) {
      this.destroy();
      this.finish(err as Error);
      return;
    }
    if (res === undefined) return;
    this.exchanges++;
    if (!res.keepAlive) this.destroy();
    this.finish(undefined, res);
  }

  private onEnd(): void {
    const parser = this.parser;
    if (parser !== undefined && parser.received) {
      let res: Http1Response;
      try {
        res = parser.end();
      } catch (err) {
        this.destroy();
        this.finish(err as Error);
        return;
      }
      this.exchanges++;
      this.destroy();
      this.finish(undefined, res);
      return;
    }
    this.destroy();
  }

  private onClose(err: Error | undefined): void {
    this.closed = true;
    this.pool.forget(this);
    if (this.settle !== undefined) this.finish(err ?? hangUp());
  }

  private finish(err: Error | undefined, res?: Http1Response): void {
    const settle = this.settle;
    this.settle = undefined;
    this.parser = undefined;
    if (settle === undefined) return;
    if (err === undefined && !this.closed) this.pool.release(this);
    settle(err, res);
  }
}

/** Keep-alive HTTP/1.1 connections to one server with one set of TLS options. */
export class Http1Pool {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  /** Idle connections are not kept (new credentials): each closes after its exchange. */
  private retired = false;
  private destroyed = false;

  constructor(private readonly options: Http1PoolOptions) {}

  /**
   * Sends one request (`head` is the request line and headers, without the blank line; `body` is
   * written in the same write) and resolves with the whole response. The signal aborts it at any
   * point; the socket is then destroyed.
   */
  async send(method: string, head: string, body: string | undefined, signal: AbortSignal): Promise<Http1Response> {
    const request = body === undefined ? `${head}\r\n` : `${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const reused = this.takeIdle();
    if (reused !== undefined) {
      try {
        return await this.exchange(reused, method, request, signal);
      } catch (err) {
        // A stale keep-alive socket: the server closed it before answering anything.
        if (!(err instanceof StaleSocket) || signal.aborted) throw unwrap(err, signal);
        if (method !== 'GET') throw hangUp();
      }
    }
    const conn = await this.connect(signal);
    try {
      return await this.exchange(conn, method, request, signal);
    } catch (err) {
      throw unwrap(err, signal);
    }
  }

  /**
   * Sends a bodiless GET whose answer streams (a watch; `head` as for send) and resolves once the
   * response head is read. The body is then read as the consumer iterates it; the signal aborts the
   * exchange at any point until the body ended (the socket is destroyed and the iteration throws).
   */
  async stream(head: string, signal: AbortSignal): Promise<Http1Stream> {
    const request = `${head}\r\n`;
    const reused = this.takeIdle();
    if (reused !== undefined) {
      try {
        return await this.openStream(reused, request, signal);
      } catch (err) {
        if (!(err instanceof StaleSocket) || signal.aborted) throw unwrap(err, signal);
      }
    }
    const conn = await this.connect(signal);
    try {
      return await this.openStream(conn, request, signal);
    } catch (err) {
      throw unwrap(err, signal);
    }
  }

  /** Closes idle connections now and the busy ones once their answer is read; no new ones open. */
  retire(): void {
    this.retired = true;
    for (const conn of this.idle.splice(0)) conn.destroy();
  }

  /** Closes every connection, also those in flight (their requests fail). */
  destroy(): void {
    this.retired = true;
    this.destroyed = true;
    this.idle.length = 0;
    for (const conn of this.all) conn.destroy();
    this.all.clear();
  }

  /** @internal: a connection finished an exchange and may be reused. */
  release(conn: Connection): void {
    if (this.retired || this.idle.length >= MAX_IDLE) {
      conn.destroy();
      return;
    }
    conn.socket.unref();
    this.idle.push(conn);
  }

  /** @internal: a connection closed. */
  forget(conn: Connection): void {
    this.all.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
  }

  /** The number of open connections (for tests). */
  get size(): number {
    return this.all.size;
  }

  private takeIdle(): Connection | undefined {
    for (;;) {
      const conn = this.idle.pop();
      if (conn === undefined) return undefined;
      if (!conn.closed && !conn.socket.destroyed && conn.socket.writable) return conn;
      conn.destroy();
    }
  }

  private exchange(conn: Connection, method: string, request: string, signal: AbortSignal): Promise<Http1Response> {
    return new Promise((resolve, reject) => {
      this.begin(conn, request, signal, new Http1ResponseParser(method === 'HEAD'), (err, res) => (err === undefined ? resolve(res!) : reject(err)));
    });
  }

  private openStream(conn: Connection, request: string, signal: AbortSignal): Promise<Http1Stream> {
    return new Promise((resolve, reject) => {
      let body: Http1StreamBody | undefined;
      const parser = new Http1ResponseParser(false, {
        onHead: (status) => {
          body = new Http1StreamBody(conn);
          resolve({ status, body });
        },
        onBody: (chunk) => body!.push(chunk),
      });
      this.begin(conn, request, signal, parser, (err) => {
        if (body !== undefined) body.finish(err);
        else reject(err);
      });
    });
  }

  /**
   * Writes `request` on `conn` and reads the answer with `parser`. `settled` gets the outcome with
   * its error mapped: the signal's reason once it aborted (the socket is then destroyed), a
   * StaleSocket when a reused socket was lost before any byte of the answer. A signal that had
   * already aborted leaves the connection unused in the pool.
   */
  private begin(conn: Connection, request: string, signal: AbortSignal, parser: Http1ResponseParser, settled: (err: Error | undefined, res?: Http1Response) => void): void {
    if (signal.aborted) {
      this.release(conn);
      settled(abortReason(signal));
      return;
    }
    const onAbort = () => conn.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    const reused = conn.exchanges > 0;
    conn.exchange(request, parser, (err, res) => {
      signal.removeEventListener('abort', onAbort);
      if (err === undefined) settled(undefined, res);
      else if (reused && !parser.received && !signal.aborted && isConnectionLoss(err)) settled(new StaleSocket(err));
      else settled(signal.aborted ? abortReason(signal) : err);
    });
  }

  private connect(signal: AbortSignal): Promise<Connection> {
    if (this.destroyed) return Promise.reject(new Error('connection pool is closed'));
    const { hostname, port } = this.options;
    const secure = this.options.tls;
    return new Promise((resolve, reject) => {
      signal.throwIfAborted();
      let socket: net.Socket;
      if (secure === undefined) {
        socket = net.connect({ host: hostname, port });
      } else {
        const servername = secure.servername ?? (net.isIP(hostname) === 0 ? hostname : undefined);
        const session = secure.sessions.latest;
        socket = tls.connect({
          host: hostname, port, secureContext: secure.secureContext, rejectUnauthorized: secure.rejectUnauthorized,
          ...(servername !== undefined ? { servername } : {}), ...(session !== undefined ? { session } : {}),
        });
        socket.on('session', (s: Buffer) => {
          secure.sessions.latest = s;
        });
      }
      const ready = secure === undefined ? 'connect' : 'secureConnect';
      const onAbort = () => socket.destroy();
      const cleanup = () => {
        signal.removeEventListener('abort', onAbort);
        socket.removeListener('error', onError);
        socket.removeListener('close', onClose);
      };
      const onError = (err: Error) => {
        cleanup();
        reject(signal.aborted ? abortReason(signal) : err);
      };
      const onClose = () => onError(signal.aborted ? abortReason(signal) : hangUp());
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      socket.once('close', onClose);
      socket.once(ready, () => {
        cleanup();
        socket.setNoDelay(true);
        socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
        if (this.destroyed) {
          socket.destroy();
          reject(new Error('connection pool is closed'));
          return;
        }
        const conn = new Connection(socket, this);
        this.all.add(conn);
        resolve(conn);
      });
    });
  }
}

/** A streamed answer: its status, then its body. */
export interface Http1Stream {
  status: number;
  body: Http1StreamBody;
}

/**
 * A streamed response body: the bytes (chunked coding removed) in the order they arrived, as an
 * async iterable that ends when the server ends the body and throws when the connection fails or
 * the exchange is aborted. Bytes the consumer has not taken yet are held up to a bound; the socket
 * then pauses (as node's streams apply backpressure).
 */
export class Http1StreamBody implements AsyncIterable<Buffer> {
  private readonly queue: Buffer[] = [];
  private head = 0;
  private queuedBytes = 0;
  private paused = false;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  /** @internal: made by Http1Pool.stream. */
  constructor(private readonly conn: Connection) {}

  /** @internal: bytes from the parser. */
  push(chunk: Buffer): void {
    if (this.ended) return;
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (!this.paused && this.queuedBytes >= STREAM_HIGH_WATER) {
      this.paused = true;
      this.conn.socket.pause();
    }
    this.notify();
  }

  /** @internal: the body ended (err undefined) or failed. */
  finish(err: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = err;
    // The connection may go on to its next exchange; what is queued here was already read.
    if (this.paused) {
      this.paused = false;
      this.conn.socket.resume();
    }
    this.notify();
  }

  /** Bytes read from the socket that the consumer has not taken yet. */
  get buffered(): number {
    return this.queuedBytes;
  }

  /**
   * Stops reading: before the body ended the connection is destroyed (it cannot be reused
   * mid-body), and an iteration in progress ends. After the end it does nothing.
   */
  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
    this.conn.destroy();
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        if (this.head < this.queue.length) {
          const chunk = this.queue[this.head]!;
          this.queue[this.head++] = EMPTY;
          if (this.head === this.queue.length) {
            this.queue.length = 0;
            this.head = 0;
          }
          this.queuedBytes -= chunk.length;
          if (this.paused && this.queuedBytes <= STREAM_LOW_WATER) {
            this.paused = false;
            this.conn.socket.resume();
          }
          yield chunk;
          continue;
        }
        if (this.ended) {
          if (this.failure !== undefined) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      this.destroy();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

const EMPTY = Buffer.alloc(0);

/** A reused socket lost before any byte of the answer (the request may be sent again). */
class StaleSocket extends Error {
  constructor(readonly original: Error) {
    super(original.message);
  }
}

function isConnectionLoss(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function unwrap(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return abortReason(signal);
  return err instanceof StaleSocket ? err.original : err;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
