// What the transport tests set up again and again, once: a server listening on a free loopback
// port that is closed (every connection cut) when the test ends, a node:http server that records
// each request and the TCP connection it came on, and a temporary directory removed at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The part of node:test's TestContext these helpers use. */
export interface Cleanup {
  after(fn: () => unknown): void;
}

/**
 * Starts `server` (node:net, node:http or node:https) on 127.0.0.1 and a free port, and registers
 * its end: every open connection destroyed (held watches included), then the server closed.
 */
export async function listenOnLoopback(t: Cleanup, server: Server): Promise<number> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  /** Which TCP connection carried it: 1 for the first the server accepted, and so on. */
  connection: number;
}

/** A node:http server on loopback answering with `handle`, each request recorded in `seen` before it is handled. */
export async function recordingHttpServer(
  t: Cleanup,
  handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => void,
): Promise<{ seen: SeenRequest[]; url: string }> {
  const seen: SeenRequest[] = [];
  const connections = new WeakMap<Socket, number>();
  let accepted = 0;
  const server = http.createServer((req, res) => {
    const entry = { method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, connection: connections.get(req.socket) ?? 0 };
    seen.push(entry);
    handle(req, res, entry);
  });
  server.on('connection', (socket: Socket) => connections.set(socket, ++accepted));
  const port = await listenOnLoopback(t, server);
  return { seen, url: `http://127.0.0.1:${port}` };
}

/** A fresh directory under the system's temp directory, removed when the test ends. */
export function tempDir(t: Cleanup, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
