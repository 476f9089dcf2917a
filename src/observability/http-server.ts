// The diagnostics HTTP server (§5.2) on --http-endpoint (or the deprecated --metrics-address):
// the Prometheus text at --metrics-path and, with --http-endpoint and leader election,
// /healthz/leader-election. It runs on every replica, leader or not. Addresses are Go's
// `host:port`: an empty host (":8080") listens on all interfaces.
import { messageOf } from '../base/errors.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from './log/logger.js';

export const LEADER_ELECTION_HEALTH_PATH = '/healthz/leader-election';

export type HealthResult = { ok: true } | { ok: false; message: string };

export interface HttpServerOptions {
  /** `host:port`, `:port`, `[v6]:port`. */
  address: string;
  metricsPath: string;
  registry: Registry;
  /** Extra health paths, e.g. LEADER_ELECTION_HEALTH_PATH → the elector's check. */
  healthChecks?: ReadonlyMap<string, () => HealthResult>;
  /** Awaited before each scrape is gathered (the process runner sets up deferred collectors there). */
  beforeScrape?: () => void | Promise<void>;
  log: Logger;
}

export interface DiagnosticsServer {
  /** The bound port (useful with `:0`). */
  readonly port: number;
  readonly host: string;
  /** Stops accepting and ends open connections. Safe to call twice. */
  close(): Promise<void>;
}

export class ListenAddressError extends Error {
  constructor(address: string, reason: string) {
    super(`invalid listen address ${JSON.stringify(address)}: ${reason}`);
    this.name = 'ListenAddressError';
  }
}

/** Go's net.SplitHostPort for a TCP listen address; host undefined means every interface. */
export function parseListenAddress(address: string): { host: string | undefined; port: number } {
  let host: string;
  let portText: string;
  if (address.startsWith('[')) {
    const end = address.indexOf(']');
    if (end < 0 || address[end + 1] !== ':') throw new ListenAddressError(address, 'missing port in address');
    host = address.slice(1, end);
    portText = address.slice(end + 2);
  } else {
    const colon = address.lastIndexOf(':');
    if (colon < 0) throw new ListenAddressError(address, 'missing port in address');
    host = address.slice(0, colon);
    if (host.includes(':')) throw new ListenAddressError(address, 'too many colons in address');
    portText = address.slice(colon + 1);
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new ListenAddressError(address, `invalid port ${JSON.stringify(portText)}`);
  return { host: host === '' ? undefined : host, port: Number(portText) };
}

/**
 * The registry's text, one metric at a time: a collector that throws is logged and left out, the
 * rest is still served (promhttp's ContinueOnError).
 */
export async function gatherMetrics(registry: Registry, log: Logger): Promise<string> {
  const parts: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    const name = (metric as { name?: string }).name ?? '';
    try {
      parts.push(await registry.getSingleMetricAsString(name));
    } catch (err) {
      log.error('Error gathering metric', { metric: name, err });
    }
  }
  return parts.join('\n\n') + '\n';
}

export async function startHttpServer(options: HttpServerOptions): Promise<DiagnosticsServer> {
  const { host, port } = parseListenAddress(options.address);
  const { registry, metricsPath, log } = options;
  const healthChecks = options.healthChecks ?? new Map<string, () => HealthResult>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === metricsPath) {
      await options.beforeScrape?.();
      const body = await gatherMetrics(registry, log);
      res.writeHead(200, { 'Content-Type': registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const check = healthChecks.get(path);
    if (check) {
      let result: HealthResult;
      try {
        result = check();
      } catch (err) {
        result = { ok: false, message: messageOf(err) };
      }
      if (result.ok) {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
      } else {
        // Go's http.Error: the text plus a newline, nosniff.
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
        res.end(`internal server error: ${result.message}\n`);
      }
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end('404 page not found\n');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error('HTTP handler failed', { path: req.url, err });
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // Scrapes are short; keep-alive connections must not hold the process open at exit.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => log.error('HTTP server error', { err }));
  const bound = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    port: bound.port,
    host: bound.address,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
