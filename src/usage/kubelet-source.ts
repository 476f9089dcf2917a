// Volume usage from each node's own kubelet: `GET https://<node>:<kubelet port>/stats/summary`
// (docs/auto-grow.md, "Where usage comes from"). Kubelet authorises that path as `get` on
// `nodes/stats` (never `nodes/proxy`, which allows exec into any pod), so the resizer's own
// identity needs only that rule: its bearer token or client certificate from its kubeconfig,
// resolved again every poll so rotated tokens are used. The kubelet's serving certificate is
// verified against the CA the operator gives, else the kubeconfig's CA (as metrics-server
// does), unless the operator turns verification off by name (metrics-server's
// --kubelet-insecure-tls). Only nodes with claims to measure are asked, at most `concurrency` at
// once, each within `timeoutMs`; a node that fails makes its own claims "usage unavailable" and no
// other node's.
import { readFile as readFileCallback } from 'node:fs';
import { promisify } from 'node:util';
import type http from 'node:http';
import { forEachBounded } from '../base/bounded-concurrency.js';
import { messageOf } from '../base/errors.js';
import { linkedSignal, TimeoutError } from '../base/signals.js';
import { resolveCredentials, type ResolvedCredentials } from '../kube/wire/credentials.js';
import type { ClientConfig } from '../kube/wire/kubeconfig.js';
import { HttpGetError, httpGet, keepAliveAgent, unavailableBecause, type TlsMaterial } from './http-get.js';
import { usageFromSummary } from './kubelet-summary.js';
import { DEFAULT_ADDRESS_TYPES, kubeletUrl } from './node-address.js';
import {
  claimKey,
  newerUsage,
  UsageUnavailable,
  type ClaimUsage,
  type NodeClaims,
  type UsageReport,
  type VolumeUsage,
  type VolumeUsageSource,
} from './volume-usage.js';

const readFile = promisify(readFileCallback);

/** A summary of a node with hundreds of pods is well under this; anything larger is refused. */
const MAX_SUMMARY_BYTES = 64 * 1024 * 1024;
/** An exec plugin's credential is fetched again this long before it expires. */
const EXEC_REFRESH_MARGIN_MS = 10_000;
/** Kubelet's error bodies are one line; a longer one is cut for the message. */
const MAX_ERROR_TEXT = 300;

export interface KubeletSourceOptions {
  /** The resizer's own client configuration: its credentials are what kubelet authenticates. */
  readonly kubeConfig: ClientConfig;
  /** A PEM file of the CA that signed the kubelets' serving certificates; the kubeconfig's CA when absent. */
  readonly caFile?: string;
  /** Do not verify the kubelets' serving certificates (metrics-server's --kubelet-insecure-tls). */
  readonly insecureSkipTlsVerify: boolean;
  /** The node address types to try, in order (default metrics-server's). */
  readonly preferredAddressTypes?: readonly string[];
  /** Bound on one node's answer. */
  readonly timeoutMs: number;
  /** Nodes asked at once. */
  readonly concurrency: number;
}

interface Connection {
  readonly fingerprint: string;
  readonly agent: http.Agent;
  readonly headers: Readonly<Record<string, string>>;
}

export class KubeletUsageSource implements VolumeUsageSource {
  private connection: Connection | undefined;
  private execCredentials: ResolvedCredentials | undefined;

  constructor(private readonly options: KubeletSourceOptions) {}

  async readUsage(nodes: readonly NodeClaims[], signal: AbortSignal): Promise<UsageReport> {
    const byNode = mergeByNode(nodes);
    const claims = new Map<string, ClaimUsage>();
    const failures: { source: string; reason: UsageUnavailable; message: string }[] = [];
    if (byNode.length === 0) return { claims, failures };
    const failNode = (entry: NodeEntry, reason: UsageUnavailable, message: string) => {
      failures.push({ source: `node ${entry.name}`, reason, message });
      for (const key of entry.keys) claims.set(key, newerUsage(claims.get(key), { kind: 'unavailable', reason, message }));
    };

    let connection: Connection;
    try {
      connection = await this.connect(signal);
    } catch (err) {
      signal.throwIfAborted();
      const message = `cannot read the resizer's credentials or the kubelet CA: ${messageOf(err)}`;
      for (const entry of byNode) failNode(entry, UsageUnavailable.Unauthorized, message);
      return { claims, failures };
    }

    await forEachBounded(byNode, this.options.concurrency, async (entry) => {
      const outcome = await this.readNode(entry, connection, signal);
      if (outcome.kind === 'failed') {
        failNode(entry, outcome.reason, outcome.message);
        return;
      }
      for (const key of entry.keys) {
        const usage = outcome.usage.get(key);
        const result: ClaimUsage =
          usage === undefined
            ? {
                kind: 'unavailable',
                reason: UsageUnavailable.NotReported,
                message: `kubelet on node ${entry.name} reports no usage of ${key} (not mounted there, or not measured yet)`,
              }
            : { kind: 'sampled', usage };
        claims.set(key, newerUsage(claims.get(key), result));
      }
    });
    signal.throwIfAborted();
    return { claims, failures };
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.connection?.agent.destroy();
    this.connection = undefined;
  }

  private async readNode(
    entry: NodeEntry,
    connection: Connection,
    signal: AbortSignal,
  ): Promise<{ kind: 'ok'; usage: Map<string, VolumeUsage> } | { kind: 'failed'; reason: UsageUnavailable; message: string }> {
    const endpoint = kubeletUrl(entry.node, this.options.preferredAddressTypes ?? DEFAULT_ADDRESS_TYPES, '/stats/summary');
    if (endpoint.kind === 'noAddress') return { kind: 'failed', reason: UsageUnavailable.NoAddress, message: endpoint.message };
    const where = `kubelet on node ${entry.name} (${endpoint.url.host})`;
    const call = linkedSignal(signal, this.options.timeoutMs);
    try {
      const answer = await httpGet({ url: endpoint.url, agent: connection.agent, headers: connection.headers, maxBytes: MAX_SUMMARY_BYTES }, call.signal);
      const text = () => answer.body.toString('utf8', 0, Math.min(answer.body.length, MAX_ERROR_TEXT)).trim();
      if (answer.statusCode === 401) {
        return {
          kind: 'failed',
          reason: UsageUnavailable.Unauthorized,
          message: `${where} answered 401 Unauthorized: it does not accept the resizer's credentials (kubelet needs webhook token authentication, or a client CA that signed the resizer's certificate)`,
        };
      }
      if (answer.statusCode === 403) {
        return {
          kind: 'failed',
          reason: UsageUnavailable.Forbidden,
          message: `${where} answered 403 ${JSON.stringify(text())}: the resizer needs "get" on "nodes/stats" (deploy/kubernetes/auto-grow)`,
        };
      }
      if (answer.statusCode !== 200) {
        return { kind: 'failed', reason: UsageUnavailable.BadResponse, message: `${where} answered ${answer.statusCode} ${JSON.stringify(text())}` };
      }
      let summary: unknown;
      try {
        summary = JSON.parse(answer.body.toString('utf8'));
      } catch {
        return { kind: 'failed', reason: UsageUnavailable.BadResponse, message: `${where} answered with a body that is not JSON` };
      }
      return { kind: 'ok', usage: usageFromSummary(summary, entry.keys) };
    } catch (err) {
      // The caller's abort ends the whole poll; a timeout is this node's alone.
      signal.throwIfAborted();
      if (call.signal.reason instanceof TimeoutError) {
        return { kind: 'failed', reason: UsageUnavailable.Timeout, message: `${where} did not answer within ${this.options.timeoutMs}ms` };
      }
      if (err instanceof HttpGetError) {
        const reason = unavailableBecause(err.failure);
        const hint = reason === UsageUnavailable.Tls ? " (give the CA that signed the kubelets' serving certificates, or turn verification off by name)" : '';
        return { kind: 'failed', reason, message: `${where}: ${err.message}${hint}` };
      }
      return { kind: 'failed', reason: UsageUnavailable.BadResponse, message: `${where}: ${messageOf(err)}` };
    } finally {
      call.dispose();
    }
  }

  /**
   * The resolved credentials: files are read again every poll (cheap, and rotation is seen), but
   * an exec plugin's credential is kept until shortly before it expires, as the API client keeps it.
   */
  private async credentials(signal: AbortSignal): Promise<ResolvedCredentials> {
    const kept = this.execCredentials;
    if (kept !== undefined && kept.expiresAtMs !== undefined && Date.now() < kept.expiresAtMs - EXEC_REFRESH_MARGIN_MS) return kept;
    const resolved = await resolveCredentials(this.options.kubeConfig, signal);
    this.execCredentials = this.options.kubeConfig.auth.kind === 'exec' ? resolved : undefined;
    return resolved;
  }

  /**
   * The credentials and TLS material as they are now (token files and certificates are read
   * again every poll); the kept-alive agent is reused while the TLS material is the same.
   */
  private async connect(signal: AbortSignal): Promise<Connection> {
    const resolved = await this.credentials(signal);
    const authorization = resolved.headers['Authorization'];
    // Kubelets take bearer tokens; a basic-auth password is never sent to every node.
    const headers: Record<string, string> = authorization?.startsWith('Bearer ') ? { authorization } : {};
    const insecure = this.options.insecureSkipTlsVerify;
    const ca = insecure ? undefined : this.options.caFile !== undefined ? await readFile(this.options.caFile) : resolved.tls.ca;
    const tls: TlsMaterial = {
      ...(ca ? { ca } : {}),
      ...(resolved.tls.cert ? { cert: resolved.tls.cert } : {}),
      ...(resolved.tls.key ? { key: resolved.tls.key } : {}),
      rejectUnauthorized: !insecure,
    };
    const fingerprint = [tls.ca, tls.cert, tls.key, tls.rejectUnauthorized].map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : String(v))).join('|');
    if (this.connection?.fingerprint !== fingerprint) {
      this.connection?.agent.destroy();
      this.connection = { fingerprint, agent: keepAliveAgent('https:', tls), headers };
    } else {
      this.connection = { ...this.connection, headers };
    }
    return this.connection;
  }
}

interface NodeEntry {
  readonly name: string;
  readonly node: NodeClaims['node'];
  readonly keys: Set<string>;
}

/** One entry per node that has claims to measure; a node given twice is asked once. */
function mergeByNode(nodes: readonly NodeClaims[]): NodeEntry[] {
  const byName = new Map<string, NodeEntry>();
  for (const { node, claims } of nodes) {
    if (claims.length === 0) continue;
    const name = node.metadata.name;
    const entry = byName.get(name) ?? { name, node, keys: new Set<string>() };
    for (const claim of claims) entry.keys.add(claimKey(claim));
    byName.set(name, entry);
  }
  return [...byName.values()];
}
