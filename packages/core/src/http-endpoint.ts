/**
 * A tiny HTTP endpoint for a process's `/metrics` (Prometheus text) and `/healthz` (JSON), plus
 * whatever routes the process adds (`handle`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/** Options of {@link startHttpEndpoint}. */
export interface HttpEndpointOptions {
  port: number;
  host?: string;
  metrics: Metrics;
  /** The health answer: `ok: false` gives 503. */
  health: () => { ok: boolean } & Record<string, unknown>;
  /** More routes: answer and return true, or return false for a 404. */
  handle?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;
}

/** A running endpoint. */
export interface HttpEndpoint {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
  const server: Server = createServer((req, res) => {
    const parsed = new URL(req.url ?? '/', 'http://localhost');
    const url = parsed.pathname;
    if (req.method === 'GET' && url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(options.metrics.render());
      return;
    }
    if (req.method === 'GET' && url === '/healthz') {
      const health = options.health();
      res.writeHead(health.ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(health));
      return;
    }
    if (options.handle?.(req, res, parsed)) return;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 'not-found', message: `no route ${req.method} ${url}` }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
