// Evaluation probe for issue 15 (not part of `npm run bench`): is an HTTP/1.1 client of our own,
// written straight over `tls.connect` sockets, worth replacing node:https under the request layer?
// It compares the client CPU of K API requests through our request layer (src/kube/http.ts, as in
// the working tree) with a minimal raw-TLS HTTP/1.1 client doing the same calls, alternating A B
// per round in one process. Run inside a test cluster:
//   node --import tsx test/cluster/run-with-cluster.ts -- node --import tsx bench/rawhttp-probe.ts [K] [concurrency] [rounds]
// Both GET and merge-PATCH one ConfigMap (K/2 each) with the admin kubeconfig, no client-side rate
// limit. The raw client keeps the layer's per-request work that is not transport (a linked signal
// with its timeout timer, the token bucket, an abort listener, JSON.stringify/JSON.parse, the
// same headers), so the difference is node:https's machinery alone. It is deliberately minimal
// (no retry of a stale pooled socket, no size limits, no credential rotation): an upper bound
// on what a full replacement could save. Since the layer adopted its own client (commit 3945fc7),
// the same run compares the whole layer with the minimal client: what the layer's own additions
// cost; the measured before/after is in the README (Benchmarks).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { parseEnvFile } from '../test/cluster/components.js';
import { CLUSTER_ENV_VAR } from '../test/cluster/test-cluster.js';
import { loadKubeConfig } from '../src/kube/kubeconfig.js';
import { resolveCredentials } from '../src/kube/credentials.js';
import { ContentType, KubeHttp } from '../src/kube/http.js';
import { linkedSignal } from '../src/base/signals.js';
import { TokenBucket } from '../src/base/token-bucket.js';
import { getPatchLoop, type LoopRun } from './lib/request-loop.js';

const [k = 4000, concurrency = 10, rounds = 5] = process.argv.slice(2).map(Number);
const env = parseEnvFile(readFileSync(process.env[CLUSTER_ENV_VAR]!, 'utf8'));
const kubeConfig = await loadKubeConfig({ kubeconfigPath: env.get('ADMIN_KUBECONFIG')!, masterUrl: '' });
const creds = await resolveCredentials(kubeConfig, AbortSignal.timeout(30_000));
const server = new URL(kubeConfig.server);
const path = '/api/v1/namespaces/default/configmaps/rawhttp-probe';
const signal = new AbortController().signal;

interface Client {
  request(method: 'GET' | 'PATCH', path: string, body?: unknown): Promise<unknown>;
  close(): void;
}

function viaLayer(): Client {
  const layer = new KubeHttp({ kubeConfig, qps: 0, burst: 1 });
  return {
    request: (method, p, body) => layer.request(
      body === undefined ? { method, path: p } : { method, path: p, body, contentType: ContentType.MergePatch }, signal),
    close: () => layer.close(),
  };
}

/** One response being read off a pooled socket. */
interface Pending {
  resolve(r: { status: number; body: Buffer }): void;
  reject(err: Error): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** A keep-alive socket with the minimal response parser: status line, headers, Content-Length or chunked body. */
class RawConnection {
  private buf: Buffer | undefined;
  pending: Pending | undefined;
  // Parse state for the current response.
  private status = 0;
  private bodyLength = -1; // -1: chunked
  private chunks: Buffer[] = [];
  private inBody = false;
  private chunkLeft = 0; // bytes left of the current chunk (plus its CRLF), chunked only
  dead = false;

  constructor(readonly socket: tls.TLSSocket, private readonly onIdle: (c: RawConnection) => void) {
    socket.on('data', (d: Buffer) => this.onData(d));
    const fail = (err: Error) => {
      this.dead = true;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('socket closed')));
  }

  private onData(data: Buffer): void {
    this.buf = this.buf === undefined || this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
    for (;;) {
      const buf: Buffer = this.buf!;
      if (!this.inBody) {
        const end = buf.indexOf(CRLF2);
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        this.status = Number(head.slice(9, 12));
        this.bodyLength = 0;
        let lineStart = head.indexOf('\r\n') + 2;
        while (lineStart > 1 && lineStart < head.length) {
          let lineEnd = head.indexOf('\r\n', lineStart);
          if (lineEnd < 0) lineEnd = head.length;
          const colon = head.indexOf(':', lineStart);
          const name = head.slice(lineStart, colon).toLowerCase();
          if (name === 'content-length') this.bodyLength = Number(head.slice(colon + 1, lineEnd).trim());
          else if (name === 'transfer-encoding') this.bodyLength = -1;
          lineStart = lineEnd + 2;
        }
        this.inBody = true;
        this.chunks = [];
        this.chunkLeft = 0;
        this.buf = buf.subarray(end + 4);
        continue;
      }
      if (this.bodyLength >= 0) {
        if (buf.length < this.bodyLength) return;
        this.finish(buf.subarray(0, this.bodyLength));
        this.buf = buf.subarray(this.bodyLength);
        return;
      }
      // Chunked.
      if (this.chunkLeft > 0) {
        const take = Math.min(this.chunkLeft, buf.length);
        const dataPart = Math.min(take, this.chunkLeft - 2);
        if (dataPart > 0) this.chunks.push(buf.subarray(0, dataPart));
        this.chunkLeft -= take;
        this.buf = buf.subarray(take);
        if (this.buf.length === 0) return;
        continue;
      }
      const lineEnd = buf.indexOf('\r\n');
      if (lineEnd < 0) return;
      const size = parseInt(buf.toString('latin1', 0, lineEnd), 16);
      if (size === 0) {
        const trailerEnd = buf.indexOf(CRLF2, lineEnd - 2 < 0 ? 0 : lineEnd - 2);
        if (trailerEnd < 0) return;
        this.finish(Buffer.concat(this.chunks));
        this.buf = buf.subarray(trailerEnd + 4);
        return;
      }
      this.chunkLeft = size + 2;
      this.buf = buf.subarray(lineEnd + 2);
    }
  }

  private finish(body: Buffer): void {
    this.inBody = false;
    const p = this.pending;
    this.pending = undefined;
    // Copy out before the socket buffer is reused by the next response.
    p?.resolve({ status: this.status, body });
    this.onIdle(this);
  }
}

function viaRaw(): Client {
  const secureContext = tls.createSecureContext({ ca: creds.tls.ca, cert: creds.tls.cert, key: creds.tls.key });
  const hostname = server.hostname.startsWith('[') ? server.hostname.slice(1, -1) : server.hostname;
  const port = Number(server.port || 443);
  const idle: RawConnection[] = [];
  const all = new Set<RawConnection>();
  let session: Buffer | undefined;
  const limiter = new TokenBucket({ qps: 0, burst: 1 });
  const fixedHeaders = Object.entries({ ...creds.headers, Accept: ContentType.Json, 'User-Agent': 'csi-resizer' })
    .map(([n, v]) => `${n}: ${v}\r\n`).join('') + `Host: ${server.host}\r\n`;
  const connect = (): Promise<RawConnection> => new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: hostname, port, secureContext, rejectUnauthorized: creds.tls.rejectUnauthorized,
      ...(creds.tls.servername ?? (isIP(hostname) ? undefined : hostname) ? { servername: creds.tls.servername ?? hostname } : {}), ALPNProtocols: ['http/1.1'], ...(session ? { session } : {}),
    });
    socket.setNoDelay(true);
    socket.on('session', (s: Buffer) => { session = s; });
    socket.once('secureConnect', () => {
      const c = new RawConnection(socket, (conn) => { if (!conn.dead) idle.push(conn); });
      all.add(c);
      resolve(c);
    });
    socket.once('error', reject);
  });
  const send = async (method: string, p: string, body: string | undefined, sig: AbortSignal) => {
    let conn = idle.pop();
    while (conn?.dead) conn = idle.pop();
    conn ??= await connect();
    const c = conn;
    return new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      const onAbort = () => c.socket.destroy(sig.reason instanceof Error ? sig.reason : new Error('aborted'));
      sig.addEventListener('abort', onAbort, { once: true });
      c.pending = {
        resolve: (r) => { sig.removeEventListener('abort', onAbort); resolve(r); },
        reject: (e) => { sig.removeEventListener('abort', onAbort); reject(e); },
      };
      let head = `${method} ${p} HTTP/1.1\r\n${fixedHeaders}`;
      if (body !== undefined) head += `Content-Type: ${ContentType.MergePatch}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      else head += '\r\n';
      c.socket.write(head);
    });
  };
  return {
    async request(method, p, body) {
      const call = linkedSignal(signal, 30_000);
      try {
        await limiter.take(call.signal);
        const res = await send(method, p, body === undefined ? undefined : JSON.stringify(body), call.signal);
        const text = res.body.toString('utf8');
        if (res.status < 200 || res.status > 299) throw new Error(`status ${res.status}: ${text}`);
        return text === '' ? undefined : JSON.parse(text);
      } finally {
        call.dispose();
      }
    },
    close() {
      for (const c of all) c.socket.destroy();
    },
  };
}

type Run = LoopRun;

async function run(make: () => Client): Promise<Run> {
  const client = make();
  // Connection set-up outside the measurement: one socket per worker.
  await Promise.all(Array.from({ length: concurrency }, () => client.request('GET', path)));
  const result = await getPatchLoop(k, concurrency, async (i, patch) => {
    const obj = patch ? await client.request('PATCH', path, { data: { n: String(i) } }) : await client.request('GET', path);
    if ((obj as { kind?: string } | undefined)?.kind !== 'ConfigMap') throw new Error('unexpected answer');
  });
  client.close();
  return result;
}

// The ConfigMap both read and patch (an existing one from an earlier run is fine).
const setup = new KubeHttp({ kubeConfig, qps: 0, burst: 1 });
await setup.request({
  method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: { metadata: { name: 'rawhttp-probe' }, data: {} }, contentType: ContentType.Json,
}, signal).catch(() => undefined);
setup.close();

const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results: Record<string, Run[]> = { 'request layer': [], 'raw TLS HTTP/1.1': [] };
for (let r = 0; r < rounds; r++) {
  results['request layer']!.push(await run(viaLayer));
  results['raw TLS HTTP/1.1']!.push(await run(viaRaw));
}
const medians: number[] = [];
for (const [name, runs] of Object.entries(results)) {
  const sorted = runs.map((x) => x.cpuMs).sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  medians.push(median);
  process.stdout.write(
    `${name}: ${k} requests x ${rounds} rounds, concurrency ${concurrency}: CPU ms ${runs.map((x) => `${x.cpuMs.toFixed(0)} (sys ${x.sysMs.toFixed(0)})`).join(', ')}; ` +
      `median ${((median / k) * 1000).toFixed(0)} us/request; wall ms ${runs.map((x) => x.wallMs.toFixed(0)).join(' ')}\n`,
  );
}
process.stdout.write(`raw / layer CPU per request: ${(medians[1]! / medians[0]!).toFixed(3)}\n`);
process.stdout.write(`loadavg at start ${load0}, at end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
