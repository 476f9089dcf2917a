// A small raw Kubernetes API client for the benchmark's own traffic (creating, growing and
// watching objects). It keeps one keep-alive connection pool with a fixed size, so the harness's
// load on the apiserver is bounded, and it has no rate limiter of its own: the harness is never
// the bottleneck of a figure. Only loopback addresses are accepted.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';

export interface ApiOptions {
  /** Connections kept open at most (also bounds in-flight requests). */
  maxSockets?: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${body.slice(0, 300)}`);
    this.name = 'ApiError';
  }
}

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: any };

export interface WatchHandle {
  stop(): void;
  /** Resolves when the stream ended (stop(), server close, or error). */
  readonly ended: Promise<void>;
}

export class Api {
  readonly server: URL;
  private readonly token: string;
  private readonly agent: Agent;
  private readonly watchAgent: Agent;

  constructor(kubeconfigPath: string, opts: ApiOptions = {}) {
    const kc = JSON.parse(readFileSync(kubeconfigPath, 'utf8')) as {
      clusters: Array<{ cluster: { server: string; 'certificate-authority': string } }>;
      users: Array<{ user: { token: string } }>;
    };
    const cluster = kc.clusters[0]!.cluster;
    this.server = new URL(cluster.server);
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(this.server.hostname)) {
      throw new Error(`the benchmark only talks to loopback addresses, not ${this.server.hostname}`);
    }
    this.token = kc.users[0]!.user.token;
    const ca = readFileSync(cluster['certificate-authority']);
    this.agent = new Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 16, ca });
    this.watchAgent = new Agent({ keepAlive: false, ca });
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  async call<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json', timeoutMs = 60_000): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<T>((resolve, reject) => {
      const req = request(
        new URL(path, this.server),
        {
          method,
          agent: this.agent,
          timeout: timeoutMs,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': contentType, 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) reject(new ApiError(status, text, `${method} ${path}`));
            else resolve((text === '' ? undefined : JSON.parse(text)) as T);
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out after ${timeoutMs}ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A GET whose answer is plain text (the API server's /metrics). */
  callText(path: string, timeoutMs = 60_000): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const req = request(
        new URL(path, this.server),
        { method: 'GET', agent: this.agent, timeout: timeoutMs, headers: { authorization: `Bearer ${this.token}`, accept: 'text/plain' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) !== 200) reject(new ApiError(res.statusCode ?? 0, text, `GET ${path}`));
            else resolve(text);
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${path}: timed out after ${timeoutMs}ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** Like call(), retrying 429/5xx/connection errors a bounded number of times. */
  async callRetry<T = any>(method: string, path: string, body?: unknown, contentType?: string, attempts = 8): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await this.call<T>(method, path, body, contentType);
      } catch (err) {
        const status = err instanceof ApiError ? err.status : 0;
        const transient = status === 0 || status === 429 || status >= 500;
        if (!transient || i + 1 >= attempts) throw err;
        await sleep(Math.min(100 * 2 ** i, 2000));
      }
    }
  }

  mergePatch<T = any>(path: string, body: unknown): Promise<T> {
    return this.callRetry<T>('PATCH', path, body, 'application/merge-patch+json');
  }

  /**
   * A watch from resourceVersion `rv` (a list's RV, so nothing is missed). onEvent runs for each
   * event with the arrival time in ms (performance.now()).
   */
  watch(path: string, rv: string, onEvent: (ev: WatchEvent, atMs: number) => void): WatchHandle {
    const sep = path.includes('?') ? '&' : '?';
    const url = new URL(`${path}${sep}watch=1&allowWatchBookmarks=false&resourceVersion=${encodeURIComponent(rv)}&timeoutSeconds=3600`, this.server);
    let stopped = false;
    let req: ReturnType<typeof request> | undefined;
    const ended = new Promise<void>((resolve) => {
      req = request(url, { method: 'GET', agent: this.watchAgent, headers: { authorization: `Bearer ${this.token}`, accept: 'application/json' } }, (res) => {
        if (res.statusCode !== 200) {
          process.stderr.write(`[bench] watch ${path} answered HTTP ${res.statusCode}\n`);
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = performance.now();
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() === '') continue;
            try {
              onEvent(JSON.parse(line) as WatchEvent, at);
            } catch (err) {
              process.stderr.write(`[bench] watch handler failed: ${String(err)}\n`);
            }
          }
        });
        res.on('end', () => resolve());
        res.on('error', () => resolve());
        res.on('close', () => resolve());
      });
      req.on('error', (err) => {
        if (!stopped) process.stderr.write(`[bench] watch ${path} failed: ${err.message}\n`);
        resolve();
      });
      req.end();
    });
    return {
      ended,
      stop() {
        stopped = true;
        req?.destroy();
      },
    };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs fn over items with at most `concurrency` in flight; the first failure is thrown after the rest settle. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length && failure === undefined) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== undefined) throw failure;
}
