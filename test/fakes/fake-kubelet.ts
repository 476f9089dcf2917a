// A kubelet stand-in for the auto-grow tests and bench: an HTTPS server on loopback that serves
// `/stats/summary` (stats/v1alpha1: the node, and pods with containers, cpu, memory and io with
// pressure stall information, swap, network and volumes, the claims' volumes carrying `pvcRef`)
// and `/metrics` (the kubelet_volume_stats_* gauges, for Prometheus to scrape), and guards them
// as kubelet's webhook authn/authz does: a bearer token is checked with a real TokenReview, a
// client certificate by the CA it was given (user = CN, groups = O), and every request is
// authorised with a real SubjectAccessReview against the API server (`get` on `nodes/stats` or
// `nodes/metrics`, named after the node; anything else is `nodes/proxy`), answering 401 and 403
// with kubelet's texts. So RBAC is really checked, on every request (kubelet caches decisions;
// the tests want every change seen at once).
// Faults: hang (accept, never answer) for timeouts; close() ends every connection.
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import type { Node } from '../../src/model/objects.js';
import { selfSigned } from '../support/self-signed.js';

export interface FakeVolume {
  readonly namespace: string;
  readonly claim: string;
  /** The pod that mounts it (default `pod-<claim>`); a claim under two pods appears twice. */
  readonly pod?: string;
  readonly capacityBytes: bigint;
  readonly availableBytes: bigint;
  readonly inodes?: bigint;
  readonly inodesFree?: bigint;
  /** When kubelet measured it (default: now, at the request). */
  readonly time?: string;
}

export interface FakeKubeletOptions {
  readonly nodeName: string;
  /** A kubeconfig allowed to create TokenReviews and SubjectAccessReviews (the tests' admin), as kubelet's own identity is. */
  readonly reviewerKubeconfigPath: string;
  /** The serving certificate (default: a self-signed one for IP:127.0.0.1, its own CA). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Client certificates signed by this CA authenticate as their CN (user) and O (groups). */
  readonly clientCa?: Buffer;
  readonly volumes?: readonly FakeVolume[];
  /** Pods on the node besides the claims' (each with containers, network and non-claim volumes). */
  readonly fillerPods?: number;
}

export interface KubeletRequest {
  /** When it arrived (ms since the epoch). */
  readonly receivedAtMs: number;
  readonly path: string;
  readonly user: string | undefined;
  readonly status: number;
}

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const MAX_CONNECTIONS = 256;

export class FakeKubelet {
  /** Every request answered, in order. */
  readonly requests: KubeletRequest[] = [];
  /** Requests received, answered or not (a hung kubelet answers none). */
  arrivals = 0;
  /** TLS connections accepted. */
  connections = 0;
  /** Of which resumed a TLS session (no full handshake). */
  resumedConnections = 0;
  readonly cert: Buffer;
  private volumes: readonly FakeVolume[];
  private hanging = false;
  private readonly sockets = new Set<Socket>();
  private readonly authn: k8s.AuthenticationV1Api;
  private readonly authz: k8s.AuthorizationV1Api;

  private constructor(
    private readonly server: https.Server,
    private readonly options: FakeKubeletOptions,
    cert: Buffer,
  ) {
    this.cert = cert;
    this.volumes = options.volumes ?? [];
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(options.reviewerKubeconfigPath);
    this.authn = kc.makeApiClient(k8s.AuthenticationV1Api);
    this.authz = kc.makeApiClient(k8s.AuthorizationV1Api);
  }

  static async start(options: FakeKubeletOptions): Promise<FakeKubelet> {
    const tls = options.tls ?? selfSigned('IP:127.0.0.1');
    const server = https.createServer({
      cert: tls.cert,
      key: tls.key,
      ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: false } : {}),
    });
    server.maxConnections = MAX_CONNECTIONS;
    const kubelet = new FakeKubelet(server, options, tls.cert);
    server.on('connection', (socket: Socket) => {
      kubelet.sockets.add(socket);
      socket.once('close', () => kubelet.sockets.delete(socket));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      kubelet.connections++;
      if (socket.isSessionReused()) kubelet.resumedConnections++;
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void kubelet.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return kubelet;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  /** The Node object a kubelet at this address would have: InternalIP and Hostname 127.0.0.1, its port. */
  node(): Node {
    return {
      metadata: { name: this.options.nodeName },
      status: {
        addresses: [
          { type: 'InternalIP', address: '127.0.0.1' },
          { type: 'Hostname', address: '127.0.0.1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: this.port } },
      },
    };
  }

  setVolumes(volumes: readonly FakeVolume[]): void {
    this.volumes = volumes;
  }

  /** While on, requests are read and never answered. */
  hang(on: boolean): void {
    this.hanging = on;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const receivedAtMs = Date.now();
    this.arrivals++;
    if (this.hanging) return;
    const path = new URL(req.url ?? '/', 'https://kubelet').pathname;
    const answer = (status: number, body: string, user?: string, type = 'text/plain; charset=utf-8') => {
      this.requests.push({ receivedAtMs, path, user, status });
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    let user: UserInfo | undefined;
    try {
      user = await this.authenticate(req);
    } catch {
      answer(401, 'Unauthorized');
      return;
    }
    if (user === undefined) {
      answer(401, 'Unauthorized');
      return;
    }
    const subresource = isSubpath(path, '/stats') ? 'stats' : isSubpath(path, '/metrics') ? 'metrics' : 'proxy';
    const verb = req.method === 'GET' ? 'get' : (req.method ?? '').toLowerCase();
    let allowed: boolean;
    try {
      allowed = await this.authorize(user, verb, subresource);
    } catch (err) {
      answer(500, `Authorization error (user=${user.username}, verb=${verb}, resource=nodes, subresource=${subresource}): ${String(err)}`, user.username);
      return;
    }
    if (!allowed) {
      answer(403, `Forbidden (user=${user.username}, verb=${verb}, resource=nodes, subresource(s)=[${subresource}])\n`, user.username);
      return;
    }
    if (req.method === 'GET' && path === '/stats/summary') answer(200, JSON.stringify(this.summary()), user.username, 'application/json');
    else if (req.method === 'GET' && path === '/metrics') answer(200, this.metrics(), user.username, 'text/plain; version=0.0.4');
    else answer(404, '404 page not found', user.username);
  }

  /** Kubelet's order: a verified client certificate, else a bearer token through TokenReview. */
  private async authenticate(req: http.IncomingMessage): Promise<UserInfo | undefined> {
    const socket = req.socket as TLSSocket;
    if (this.options.clientCa && socket.authorized) {
      const subject = socket.getPeerCertificate().subject as unknown as Record<string, string | string[] | undefined> | undefined;
      const cn = subject?.['CN'];
      const o = subject?.['O'];
      if (typeof cn === 'string') return { username: cn, groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
    }
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) return undefined;
    const review = await this.authn.createTokenReview({ body: { spec: { token: header.slice('Bearer '.length) } } });
    if (!review.status?.authenticated || !review.status.user?.username) return undefined;
    const u = review.status.user;
    return { username: u.username!, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups ?? [], ...(u.extra ? { extra: u.extra } : {}) };
  }

  private async authorize(user: UserInfo, verb: string, subresource: string): Promise<boolean> {
    const review = await this.authz.createSubjectAccessReview({
      body: {
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups ?? [],
          ...(user.extra ? { extra: user.extra } : {}),
          resourceAttributes: { verb, group: '', version: 'v1', resource: 'nodes', subresource, name: this.options.nodeName },
        },
      },
    });
    return review.status?.allowed === true;
  }

  private summary(): unknown {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const byPod = new Map<string, { namespace: string; volumes: FakeVolume[] }>();
    for (const v of this.volumes) {
      const pod = v.pod ?? `pod-${v.claim}`;
      const entry = byPod.get(`${v.namespace}/${pod}`) ?? { namespace: v.namespace, volumes: [] };
      entry.volumes.push(v);
      byPod.set(`${v.namespace}/${pod}`, entry);
    }
    const pods = [...byPod.entries()].map(([key, { namespace, volumes }]) =>
      podStats(namespace, key.slice(namespace.length + 1), now, [
        ...volumes.map((v) => ({
          ...fsStats(v.time ?? now, v.capacityBytes, v.availableBytes, v.inodes, v.inodesFree),
          name: `vol-${v.claim}`,
          pvcRef: { name: v.claim, namespace: v.namespace },
        })),
        serviceAccountVolume(now),
      ]),
    );
    for (let i = 0; i < (this.options.fillerPods ?? 0); i++) {
      pods.push(
        podStats('workloads', `filler-${i}`, now, [serviceAccountVolume(now), { ...fsStats(now, 8n << 30n, 6n << 30n, 500_000n, 499_000n), name: 'scratch' }]),
      );
    }
    return {
      node: {
        nodeName: this.options.nodeName,
        systemContainers: [{ name: 'kubelet', startTime: now, cpu: cpu(now), memory: memory(now) }],
        startTime: now,
        cpu: cpu(now),
        memory: memory(now),
        io: io(now),
        network: network(now),
        fs: fsStats(now, 100n << 30n, 40n << 30n, 6_000_000n, 5_000_000n),
        runtime: { imageFs: fsStats(now, 100n << 30n, 40n << 30n, 6_000_000n, 5_000_000n) },
        rlimit: { time: now, maxpid: 4194304, curproc: 900 },
        swap: { time: now, swapAvailableBytes: 0, swapUsageBytes: 0 },
      },
      pods,
    };
  }

  private metrics(): string {
    const lines: string[] = [];
    const gauge = (name: string, help: string, value: (v: FakeVolume) => bigint | undefined) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      const seen = new Set<string>();
      for (const v of this.volumes) {
        const key = `${v.namespace}/${v.claim}`;
        const n = value(v);
        if (seen.has(key) || n === undefined) continue;
        seen.add(key);
        lines.push(`${name}{namespace="${v.namespace}",persistentvolumeclaim="${v.claim}"} ${n}`);
      }
    };
    gauge('kubelet_volume_stats_available_bytes', '[ALPHA] Number of available bytes in the volume', (v) => v.availableBytes);
    gauge('kubelet_volume_stats_capacity_bytes', '[ALPHA] Capacity in bytes of the volume', (v) => v.capacityBytes);
    gauge('kubelet_volume_stats_inodes', '[ALPHA] Maximum number of inodes in the volume', (v) => v.inodes);
    gauge('kubelet_volume_stats_inodes_free', '[ALPHA] Number of free inodes in the volume', (v) => v.inodesFree);
    return lines.join('\n') + '\n';
  }
}

function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

function fsStats(time: string, capacity: bigint, available: bigint, inodes?: bigint, inodesFree?: bigint): Record<string, unknown> {
  return {
    time,
    availableBytes: Number(available),
    capacityBytes: Number(capacity),
    usedBytes: Number(capacity - available),
    ...(inodes !== undefined && inodesFree !== undefined
      ? { inodesFree: Number(inodesFree), inodes: Number(inodes), inodesUsed: Number(inodes - inodesFree) }
      : {}),
  };
}

// Pressure stall information, as kubelet reports it for cpu, memory and io with its KubeletPSI feature on.
const psiData = { total: 1_234_567, avg10: 0.12, avg60: 0.08, avg300: 0.05 };
const psi = { full: psiData, some: psiData };
const cpu = (time: string) => ({ time, usageNanoCores: 12_000_000, usageCoreNanoSeconds: 98_765_432_100, psi });
const memory = (time: string) => ({
  time,
  availableBytes: 1 << 30,
  usageBytes: 200 << 20,
  workingSetBytes: 150 << 20,
  rssBytes: 120 << 20,
  pageFaults: 1200,
  majorPageFaults: 3,
  psi,
});
const io = (time: string) => ({ time, psi });
const swap = (time: string) => ({ time, swapUsageBytes: 0 });
const network = (time: string) => ({
  time,
  name: 'eth0',
  rxBytes: 123_456_789,
  rxErrors: 0,
  txBytes: 98_765_432,
  txErrors: 0,
  interfaces: [{ name: 'eth0', rxBytes: 123_456_789, rxErrors: 0, txBytes: 98_765_432, txErrors: 0 }],
});
const serviceAccountVolume = (time: string) => ({ ...fsStats(time, 1n << 30n, 1n << 30n, 250_000n, 249_990n), name: 'kube-api-access' });

function podStats(namespace: string, name: string, time: string, volume: Record<string, unknown>[]): Record<string, unknown> {
  const container = (c: string) => ({
    name: c,
    startTime: time,
    cpu: cpu(time),
    memory: memory(time),
    io: io(time),
    rootfs: fsStats(time, 100n << 30n, 40n << 30n, 6_000_000n, 5_000_000n),
    logs: fsStats(time, 100n << 30n, 40n << 30n, 6_000_000n, 5_000_000n),
    swap: swap(time),
  });
  return {
    podRef: { name, namespace, uid: `uid-${namespace}-${name}` },
    startTime: time,
    containers: [container('app'), container('sidecar')],
    cpu: cpu(time),
    memory: memory(time),
    io: io(time),
    network: network(time),
    volume,
    'ephemeral-storage': fsStats(time, 100n << 30n, 40n << 30n, 6_000_000n, 5_000_000n),
    process_stats: { process_count: 7 },
    swap: swap(time),
  };
}
