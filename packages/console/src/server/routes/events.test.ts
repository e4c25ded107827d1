// The live stream: the channel's coalescing, heartbeat and buffer bound (fake timers, a writable
// that never drains), and the route over a real socket against a real ZooKeeper — a job write shows
// up as an event; the cache listener goes when the client does.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import { eventually } from '@orrery/core/testing';
import type { ConsoleCache } from '../console-cache.js';
import { startClusterConsole, writeJob, writeShard, type ClusterTestConsole } from './cluster-test-support.js';
import { createEventRoutes, createSseChannel } from './events.js';

/** A response that keeps everything written (or, with `stuck`, never finishes a write). */
function sink(stuck = false): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _enc, callback) {
      chunks.push(chunk.toString());
      if (!stuck) callback();
    },
  });
  return Object.assign(w, { text: () => chunks.join('') });
}

describe('the SSE channel', () => {
  it('sends one event per key per window, with the state at send time', () => {
    vi.useFakeTimers();
    try {
      const out = sink();
      const channel = createSseChannel(out, { coalesceMs: 100, heartbeatMs: 60_000 });
      let version = 0;
      for (let i = 0; i < 10; i += 1) {
        version += 1;
        channel.push('job|a', () => ({ event: 'job', data: { job: 'a', version } }));
      }
      channel.push('job|b', () => ({ event: 'job', data: { job: 'b' } }));
      expect(out.text()).toBe('');
      vi.advanceTimersByTime(100);
      expect(out.text()).toBe('id: 1\nevent: job\ndata: {"job":"a","version":10}\n\nid: 2\nevent: job\ndata: {"job":"b"}\n\n');
      channel.push('job|a', () => ({ event: 'job', data: { job: 'a' } }));
      vi.advanceTimersByTime(100);
      expect(out.text().match(/event: job/g)).toHaveLength(3);
      channel.close();
      channel.push('job|a', () => ({ event: 'job', data: {} }));
      vi.advanceTimersByTime(1000);
      expect(out.text().match(/event: job/g)).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes a heartbeat comment', () => {
    vi.useFakeTimers();
    try {
      const out = sink();
      const channel = createSseChannel(out, { heartbeatMs: 1000 });
      vi.advanceTimersByTime(2500);
      expect(out.text().match(/^: heartbeat /gm)).toHaveLength(2);
      channel.close();
      vi.advanceTimersByTime(5000);
      expect(out.text().match(/^: heartbeat /gm)).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops a client that does not read once its buffer passes the bound', () => {
    const out = sink(true);
    const dropped = vi.fn();
    const other = createSseChannel(out, { maxBufferedBytes: 1024, heartbeatMs: 60_000, onDrop: dropped });
    for (let i = 0; i < 100 && !other.closed; i += 1) other.send({ event: 'job', data: { filler: 'x'.repeat(100) } });
    expect(other.closed).toBe(true);
    expect(dropped).toHaveBeenCalledTimes(1);
    expect(out.destroyed).toBe(true);
    expect(out.writableLength).toBeLessThan(1024 + 300);
  });
});

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
let listeners = 0;
let port = 0;

/** Counts the cache's `change` listeners (the stream must remove its own). */
function counting(cache: ConsoleCache): ConsoleCache {
  return Object.assign(Object.create(cache) as ConsoleCache, {
    on: ((event: 'change' | 'error', listener: (payload: unknown) => void) => {
      const off = cache.on(event, listener as never);
      if (event !== 'change') return off;
      listeners += 1;
      let done = false;
      return () => {
        if (!done) listeners -= 1;
        done = true;
        off();
      };
    }) as ConsoleCache['on'],
  });
}

beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-events', [createEventRoutes({ coalesceMs: 50, heartbeatMs: 200 })], { wrapCache: counting });
  await c.app.listen({ port: 0, host: '127.0.0.1' });
  port = (c.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await c.close();
});

/** Opens the stream as `user`; collects its text. */
function open(user: string, namespace = 'shop'): Promise<{ res: IncomingMessage; text: () => string; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `/api/v1/namespaces/${namespace}/events`, headers: { 'x-test-user': user, accept: 'text/event-stream' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('error', () => {});
      resolve({ res, text: () => text, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /namespaces/:namespace/events', () => {
  it('streams a job write, a shard write, heartbeats; removes its listener when the client goes', async () => {
    const stream = await open('vic');
    try {
      expect(stream.res.statusCode).toBe(200);
      expect(stream.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      await eventually(() => expect(stream.text()).toContain('event: ready'));
      expect(listeners).toBe(1);
      await writeJob(c.zk, { name: 'nightly', cron: '0 0 * * *' });
      await eventually(() => expect(stream.text()).toMatch(/event: job\ndata: \{"kind":"job","namespace":"shop","job":"nightly","deleted":false\}/));
      await writeShard(c.zk, 'nightly', 2, { state: 'idle' });
      await eventually(() => expect(stream.text()).toMatch(/event: shard\ndata: \{"kind":"shard","namespace":"shop","job":"nightly","item":2,"deleted":false\}/));
      await eventually(() => expect(stream.text()).toMatch(/^: heartbeat /m));
      // Five quick writes of one job: coalesced into fewer events.
      const before = stream.text().match(/"job":"nightly","deleted"/g)?.length ?? 0;
      for (let i = 0; i < 5; i += 1) await writeJob(c.zk, { name: 'nightly', cron: '0 0 * * *', description: `v${i}` });
      await c.cache.settled();
      await eventually(() => expect((stream.text().match(/"job":"nightly","deleted"/g)?.length ?? 0)).toBeGreaterThan(before));
    } finally {
      stream.close();
    }
    await eventually(() => expect(listeners).toBe(0));
  });

  it('answers 403 without the role and 404 for an unknown namespace, as JSON', async () => {
    const forbidden = await c.as('eve', { method: 'GET', url: '/api/v1/namespaces/shop/events' });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('forbidden');
    const missing = await c.as('root', { method: 'GET', url: '/api/v1/namespaces/none/events' });
    expect(missing.statusCode).toBe(404);
    expect(listeners).toBe(0);
  });
});
