/**
 * The executor's HTTP endpoint: `/healthz` and `/metrics` (open), and its run history and logs,
 * authenticated with the cluster token (`Authorization: Bearer $ORRERY_CLUSTER_TOKEN`):
 * - `GET /runs?job=J[&limit=N]` — the job's runs here, newest first;
 * - `GET /runs/:runId` — one run's record;
 * - `GET /runs/:runId/log?stream=stdout|stderr[&offset=N]` — its full log from byte N, or a
 *   `Range: bytes=a-b` request (206) for tailing.
 */
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { startHttpEndpoint, type HttpEndpoint, type Metrics } from '@orrery/core';
import type { History } from './history.js';

export interface ExecutorHttpOptions {
  port: number;
  host: string;
  metrics: Metrics;
  history: History;
  /** Undefined: history endpoints answer 403. */
  clusterToken: string | undefined;
  health: () => { ok: boolean } & Record<string, unknown>;
}

export type ExecutorHttp = HttpEndpoint;

const JOB = /^[A-Za-z0-9_-]{1,64}$/;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function authorised(req: IncomingMessage, token: string | undefined): 'ok' | 'no-token' | 'denied' {
  if (!token) return 'no-token';
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want) ? 'ok' : 'denied';
}

export async function startExecutorHttp(options: ExecutorHttpOptions): Promise<ExecutorHttp> {
  return startHttpEndpoint({
    port: options.port,
    host: options.host,
    metrics: options.metrics,
    health: options.health,
    handle: (req, res, url) => {
      if (!url.pathname.startsWith('/runs')) return false;
      serveRuns(req, res, url, options);
      return true;
    },
  });
}

function serveRuns(req: IncomingMessage, res: ServerResponse, url: URL, options: ExecutorHttpOptions): void {
  if (req.method !== 'GET') return json(res, 405, { code: 'usage', message: 'only GET' });
  const auth = authorised(req, options.clusterToken);
  if (auth === 'no-token') return json(res, 403, { code: 'no-auth', message: 'run history is disabled: this executor has no ORRERY_CLUSTER_TOKEN' });
  if (auth === 'denied') return json(res, 401, { code: 'no-auth', message: 'a valid cluster token is required (Authorization: Bearer …)' });
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts.length === 1) {
    const job = url.searchParams.get('job') ?? '';
    if (!JOB.test(job)) return json(res, 400, { code: 'validation', message: 'job: required, [A-Za-z0-9_-]{1,64}' });
    const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 100) || 100));
    return json(res, 200, options.history.list(job, limit));
  }
  const runId = parts[1]!;
  if (parts.length === 2) {
    const found = options.history.get(runId);
    return found ? json(res, 200, found.record) : json(res, 404, { code: 'not-found', message: `no run ${runId} here` });
  }
  if (parts.length !== 3 || parts[2] !== 'log') return json(res, 404, { code: 'not-found', message: `no route ${url.pathname}` });
  const stream = url.searchParams.get('stream') ?? 'stdout';
  if (stream !== 'stdout' && stream !== 'stderr') return json(res, 400, { code: 'validation', message: "stream: must be 'stdout' or 'stderr'" });
  const path = options.history.logPath(runId, stream);
  if (!path || !options.history.get(runId)) return json(res, 404, { code: 'not-found', message: `no run ${runId} here` });
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    size = 0;
  }
  let start = Math.max(0, Number(url.searchParams.get('offset') ?? 0) || 0);
  let end = size - 1;
  let status = 200;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (range) {
    if (range[1] === '' && range[2] !== '') start = Math.max(0, size - Number(range[2]));
    else {
      start = Number(range[1]);
      if (range[2] !== '') end = Math.min(end, Number(range[2]));
    }
    if (start >= size && size > 0) {
      res.writeHead(416, { 'content-range': `bytes */${size}` });
      res.end();
      return;
    }
    status = 206;
  }
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8', 'accept-ranges': 'bytes', 'x-log-size': String(size) };
  if (status === 206) headers['content-range'] = `bytes ${start}-${Math.max(start, end)}/${size}`;
  res.writeHead(status, headers);
  if (size === 0 || start > end) {
    res.end();
    return;
  }
  createReadStream(path, { start, end }).pipe(res);
}
