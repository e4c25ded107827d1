import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HTTP_STATUS, OrreryError, type ErrorCode } from './errors.js';
import { createHttpApp, httpErrorAnswer, startHttpEndpoint, type HttpEndpointOptions } from './http-endpoint.js';
import { createMetrics } from './metrics.js';

/** A real pino logger whose lines the test reads. */
const capturingLogger = () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } });
  return { logger, lines };
};

const base = (extra: Partial<HttpEndpointOptions> = {}): Omit<HttpEndpointOptions, 'port'> => {
  const metrics = createMetrics();
  metrics.counter('orrery_test_total', 'a test counter').inc();
  return { metrics, health: () => ({ ok: true, zookeeper: 'connected' }), ...extra };
};

/** Sends raw bytes on a fresh connection; resolves with everything the server sent before closing. */
function raw(port: number, bytes: string | Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: rest.join('\r\n\r\n') });
    });
    socket.end(bytes);
  });
}

describe('the one status table', () => {
  it('has a status for every code, and docs/errors.md shows the same', () => {
    expect(Object.keys(HTTP_STATUS).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const row = doc.split('\n').find((l) => l.startsWith('|') && l.split('|')[1]!.includes(`\`${code}\``));
      expect(row, code).toBeDefined();
      expect(Number(row!.trim().split('|').at(-2)!.trim()), code).toBe(HTTP_STATUS[code]);
    }
  });

  it('answers unavailable (503) with its message and details: they are written for the caller', () => {
    const answer = httpErrorAnswer(new OrreryError('unavailable', 'set ORRERY_CLUSTER_TOKEN', { details: { reason: 'no-cluster-token' } }), 'req-8');
    expect(answer).toEqual({ status: 503, body: { code: 'unavailable', message: 'set ORRERY_CLUSTER_TOKEN', details: { reason: 'no-cluster-token' } }, log: true });
  });

  it.each([
    ['validation', 400], ['usage', 400], ['not-found', 404], ['no-node', 404], ['conflict', 409], ['bad-version', 409],
    ['already-exists', 409], ['no-auth', 401], ['auth-failed', 403], ['not-connected', 503], ['timeout', 504], ['internal', 500], ['bad-data', 500],
  ] as const)('%s answers %i', (code, status) => {
    const answer = httpErrorAnswer(new OrreryError(code, 'secret path /x/y', { details: { field: 'a' } }), 'req-7');
    expect(answer.status).toBe(status);
    if (status >= 500) {
      expect(answer.body).toEqual({ code, message: expect.stringContaining('req-7') });
      expect(answer.body.message).not.toContain('secret');
      expect(answer.log).toBe(true);
    } else {
      expect(answer.body).toEqual({ code, message: 'secret path /x/y', details: { field: 'a' } });
      expect(answer.log).toBe(false);
    }
  });

  it('answers an unknown error, a thrown string and null with a generic 500', () => {
    for (const thrown of [new TypeError('Invalid URL at /home/x'), 'boom', null, { code: 'EACCES', message: 'permission denied /etc' }]) {
      const answer = httpErrorAnswer(thrown, 'req-1');
      expect(answer).toMatchObject({ status: 500, log: true, body: { code: 'internal' } });
      expect(JSON.stringify(answer.body)).not.toMatch(/Invalid URL|boom|EACCES|\/etc/);
    }
  });

  it("maps Fastify's own 4xx errors to validation with their status, field and rule", () => {
    const fst = (code: string, statusCode: number) => Object.assign(new Error('x'), { code, statusCode });
    expect(httpErrorAnswer(fst('FST_ERR_CTP_BODY_TOO_LARGE', 413), 'r')).toMatchObject({ status: 413, body: { code: 'validation', details: { issues: [{ field: 'body', rule: 'max-size' }] } } });
    expect(httpErrorAnswer(fst('FST_ERR_BAD_URL', 400), 'r')).toMatchObject({ status: 400, body: { details: { issues: [{ field: 'url', rule: 'percent-encoding' }] } } });
    expect(httpErrorAnswer(fst('FST_ERR_MAX_PARAM_LENGTH', 414), 'r')).toMatchObject({ status: 414 });
    expect(httpErrorAnswer(fst('FST_ERR_SOMETHING_NEW', 400), 'r')).toMatchObject({ status: 400, body: { details: { issues: [{ field: 'request', rule: 'err-something-new' }] } } });
    expect(httpErrorAnswer(fst('FST_ERR_WHATEVER', 500), 'r')).toMatchObject({ status: 500, body: { code: 'internal' } });
  });
});

describe('the endpoint (app.inject)', () => {
  it('serves /metrics as Prometheus text and /healthz as JSON, HEAD included; 503 when not ok', async () => {
    let ok = true;
    const app = createHttpApp(base({ health: () => ({ ok, zookeeper: ok ? 'connected' : 'suspended' }) }));
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.body).toContain('orrery_test_total 1');
    expect((await app.inject({ method: 'HEAD', url: '/metrics' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ ok: true, zookeeper: 'connected' });
    const head = await app.inject({ method: 'HEAD', url: '/healthz' });
    expect([head.statusCode, head.body]).toEqual([200, '']);
    ok = false;
    const down = await app.inject({ method: 'GET', url: '/healthz' });
    expect([down.statusCode, down.json()]).toEqual([503, { ok: false, zookeeper: 'suspended' }]);
    await app.close();
  });

  it('answers unknown paths and methods with a JSON 404', async () => {
    const app = createHttpApp(base());
    for (const [method, url] of [['GET', '/'], ['GET', '/metricsfoo'], ['GET', '/healthz/'], ['POST', '/healthz'], ['DELETE', '/metrics'], ['OPTIONS', '/healthz']] as const) {
      const res = await app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual({ code: 'not-found', message: `no route ${method} ${url}` });
    }
    await app.close();
  });

  it('answers what a route or the health check throws through the one handler, logging 5xx in full', async () => {
    const { logger, lines } = capturingLogger();
    const app = createHttpApp(base({
      logger,
      health: () => { throw new Error('health exploded at /secret/place'); },
      routes: (scope) => {
        scope.get('/conflict', async () => { throw new OrreryError('conflict', 'changed meanwhile', { details: { version: 3 } }); });
        scope.get('/bug', async () => { throw new RangeError('offset out of range'); });
        scope.get('/string', async () => { throw 'a string'; }); // eslint-disable-line no-throw-literal
        scope.get('/sync', () => { throw new TypeError('sync'); });
      },
    }));
    const conflict = await app.inject({ method: 'GET', url: '/conflict' });
    expect([conflict.statusCode, conflict.json()]).toEqual([409, { code: 'conflict', message: 'changed meanwhile', details: { version: 3 } }]);
    for (const url of ['/bug', '/string', '/sync', '/healthz']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(500);
      expect(res.json(), url).toEqual({ code: 'internal', message: expect.stringMatching(/request id req-/) });
      expect(res.body).not.toMatch(/offset out of range|sync|exploded|a string|\bat /);
    }
    const logged = lines.filter((l) => l.msg === 'http request failed');
    expect(logged).toHaveLength(4);
    expect(JSON.stringify(logged[0])).toContain('offset out of range');
    expect(JSON.stringify(logged[3])).toContain('/secret/place');
    await app.close();
  });
});

describe('the endpoint on a socket', () => {
  it('binds 127.0.0.1 by default and closes idempotently', async () => {
    const endpoint = await startHttpEndpoint({ port: 0, ...base() });
    const res = await fetch(`http://127.0.0.1:${endpoint.port}/healthz`);
    expect(res.status).toBe(200);
    await Promise.all([endpoint.close(), endpoint.close()]);
    await endpoint.close();
    await expect(fetch(`http://127.0.0.1:${endpoint.port}/healthz`)).rejects.toThrow();
  });

  it('answers every malformed request with a JSON 4xx and stays up', async () => {
    const endpoint = await startHttpEndpoint({ port: 0, ...base({ routes: (scope) => { scope.post('/echo', async () => 'ok'); } }) });
    const get = (target: string, headers = '') => `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${headers}\r\n`;
    const cases: Array<[string, string | Buffer, number | number[]]> = [
      ['//[', get('//['), 404],
      ['http://[', get('http://['), 400],
      ['//%', get('//%'), 400],
      ['//:99999/', get('//:99999/'), 404],
      ['http://%zz', get('http://%zz'), 400],
      ['*', get('*'), 404],
      ['absolute form', get('http://example.com/healthz'), 200],
      ['absolute form, bad port', get('http://example.com:99999/healthz'), 400],
      ['bad percent-encoding', get('/healthz%'), 400],
      ['NUL in the target', get('/a\u0000b'), 400],
      ['encoded NUL', get('/%00'), 404],
      ['very long target', get(`/${'a'.repeat(20_000)}`), 431],
      ['huge header', get('/healthz', `x-big: ${'b'.repeat(20_000)}\r\n`), 431],
      ['garbage method', 'BREW /healthz HTTP/1.1\r\nhost: x\r\n\r\n', 400],
      ['not HTTP', 'hello\r\n\r\n', 400],
      ['binary', Buffer.from([0, 1, 2, 255, 13, 10, 13, 10]), 400],
      ['bad Content-Length', get('/healthz', 'content-length: -1\r\n'), 400],
      ['two Content-Lengths', get('/healthz', 'content-length: 1\r\ncontent-length: 2\r\n'), 400],
      ['Content-Length and chunked', 'POST /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      // No route reads this body: the 404 or the parser's 400, whichever comes first.
      ['bad chunk in a body nobody reads', 'POST /healthz HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', [400, 404]],
      ['bad chunk in a body read', 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', 400],
      ['body too large', `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 20000\r\n\r\n${'x'.repeat(20_000)}`, 413],
      ['unknown media type', 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: image/png\r\ncontent-length: 1\r\n\r\nx', 415],
      ['bad JSON', 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1\r\n\r\n{', 400],
      ['HTTP/1.0 without host', 'GET /healthz HTTP/1.0\r\n\r\n', 200],
      ['HTTP/1.1 without host', 'GET /healthz HTTP/1.1\r\n\r\n', 400],
    ];
    for (const [what, bytes, status] of cases) {
      const res = await raw(endpoint.port, bytes);
      expect([status].flat(), what).toContain(res.status);
      if (res.status >= 400) {
        const body = JSON.parse(res.body) as { code: string; message: string };
        expect(body, what).toMatchObject({ code: expect.any(String), message: expect.any(String) });
        expect(res.body, what).not.toMatch(/\n\s+at /);
      }
    }
    expect((await fetch(`http://127.0.0.1:${endpoint.port}/healthz`)).status).toBe(200);
    await endpoint.close();
  });
});
