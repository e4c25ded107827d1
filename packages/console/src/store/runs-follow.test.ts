// Following a log against stand-in executors on real sockets that misbehave — one ignores Range and
// sends a huge 200, one answers 206 but announces far more than the chunk asked for, one stalls
// mid-body — with the run's place read from a real ZooKeeper: the follower never reads more than
// the chunk it asked for, and it ends when the idle timeout passes or its reader leaves.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createZkClient, encodeJson, paths, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createNamespace } from './namespaces.js';
import { FOLLOW_CHUNK_BYTES, followLog, runDirectoryFromZk, type FollowEvent, type RunsClientOptions } from './runs.js';

const zkConnect = inject('zkConnect');
const NS = 'shop';
const JOB = 'tail';
const RUN = 'lx0-0-abc';
/** What the misbehaving executors announce: a gibibyte. */
const HUGE = 1024 * 1024 * 1024;
const PIECE = Buffer.alloc(16 * 1024, 'x');

type Kind = 'ignores-range' | 'announces-too-much' | 'stalls';
let zk: ZkClient;
const servers: Server[] = [];
/** Per stand-in: bytes written into answers, and answers whose connection closed. */
const written: Record<Kind, number> = { 'ignores-range': 0, 'announces-too-much': 0, stalls: 0 };
const closedAnswers: Record<Kind, number> = { 'ignores-range': 0, 'announces-too-much': 0, stalls: 0 };
const open = new Set<ServerResponse>();

/** Writes pieces every 20 ms until the client goes (a slow, endless body). */
function trickle(kind: Kind, res: ServerResponse): void {
  const timer = setInterval(() => {
    written[kind] += PIECE.length;
    res.write(PIECE);
  }, 20);
  res.on('close', () => clearInterval(timer));
}

async function standIn(kind: Kind): Promise<string> {
  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => {
      open.delete(res);
      closedAnswers[kind] += 1;
    });
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.endsWith('/log')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not-found","message":"no record"}');
    const first = Number(/^bytes=(\d+)-/.exec(req.headers.range ?? '')?.[1] ?? 0);
    if (kind === 'ignores-range') {
      res.writeHead(200, { 'x-log-size': String(HUGE), 'content-length': String(HUGE) });
      return trickle(kind, res);
    }
    if (kind === 'announces-too-much') {
      res.writeHead(206, { 'x-log-size': String(2 * HUGE), 'content-range': `bytes ${first}-${first + HUGE - 1}/${2 * HUGE}`, 'content-length': String(HUGE) });
      return trickle(kind, res);
    }
    // Stalls: an honest header, a hundred bytes, then nothing.
    res.writeHead(206, { 'x-log-size': String(2 * FOLLOW_CHUNK_BYTES), 'content-range': `bytes ${first}-${first + FOLLOW_CHUNK_BYTES - 1}/${2 * FOLLOW_CHUNK_BYTES}`, 'content-length': String(FOLLOW_CHUNK_BYTES) });
    written[kind] += 100;
    res.write(Buffer.alloc(100, 'y'));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('runs-follow') });
  await zk.start();
  await createNamespace(zk, NS);
  for (const kind of ['ignores-range', 'announces-too-much', 'stalls'] as const) {
    await zk.mkdirp(paths.executor(NS, kind));
    await zk.create(paths.executorPresence(NS, kind), encodeJson({ host: '127.0.0.1', pid: 1, version: 'test', startedAt: 1, handlers: [], tags: [], httpUrl: await standIn(kind) }), 'ephemeral');
  }
});
afterAll(async () => {
  await zk.close();
  for (const res of open) res.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** Marks the run as running on `executor` (the shard node an executor writes). */
async function running(executor: Kind): Promise<void> {
  await zk.mkdirp(paths.jobShards(NS, JOB));
  const state = encodeJson({ state: 'running', executor, session: 's', runId: RUN, fireTime: 1, startedAt: 1, attempt: 1 });
  const path = paths.jobShard(NS, JOB, 0);
  if (await zk.exists(path)) await zk.set(path, state);
  else await zk.create(path, state);
}

/** Follows the run in the background; the events so far and whether it has ended. */
function follow(client: Partial<RunsClientOptions>, signal?: AbortSignal): { events: FollowEvent[]; ended: () => boolean; error: () => unknown } {
  const events: FollowEvent[] = [];
  let ended = false;
  let error: unknown;
  void (async () => {
    try {
      for await (const event of followLog(runDirectoryFromZk(zk, NS), JOB, RUN, { pollMs: 50, offlineAfterMs: 1000, ...(signal ? { signal } : {}) }, { clusterToken: 'tok', ...client })) events.push(event);
    } catch (e) {
      error = e;
    } finally {
      ended = true;
    }
  })();
  return { events, ended: () => ended, error: () => error };
}

describe('following a log from a misbehaving executor', () => {
  it('refuses a 200 that ignores Range without reading it, and calls the executor offline', async () => {
    await running('ignores-range');
    const f = follow({ bodyIdleTimeoutMs: 60_000 });
    await eventually(() => expect(f.ended()).toBe(true), { timeoutMs: 8000 });
    expect(f.error()).toBeUndefined();
    expect(f.events.filter((e) => e.type === 'log')).toEqual([]);
    expect(f.events.at(-1)).toMatchObject({ type: 'executor-offline', executor: 'ignores-range' });
    // Every answer's connection was let go, long before a gibibyte.
    await eventually(() => expect(open.size).toBe(0));
    expect(written['ignores-range']).toBeLessThan(32 * 1024 * 1024);
  });

  it('reads at most the chunk it asked for from a 206 that announces more, and stops when its reader leaves', async () => {
    await running('announces-too-much');
    const controller = new AbortController();
    const f = follow({ bodyIdleTimeoutMs: 60_000 }, controller.signal);
    await eventually(() => expect(f.events.filter((e) => e.type === 'log').length).toBeGreaterThanOrEqual(3), { timeoutMs: 15_000 });
    controller.abort();
    await eventually(() => expect(f.ended()).toBe(true), { timeoutMs: 3000 });
    expect(f.error()).toBeUndefined();
    for (const e of f.events) {
      if (e.type !== 'log') continue;
      expect(e.next - e.offset).toBe(FOLLOW_CHUNK_BYTES); // exactly the chunk asked for, no more
    }
    await eventually(() => expect(open.size).toBe(0));
    expect(closedAnswers['announces-too-much']).toBeGreaterThanOrEqual(3);
  });

  it('gives up on a stalled body after the idle timeout and calls the executor offline', async () => {
    await running('stalls');
    const f = follow({ bodyIdleTimeoutMs: 300 });
    await eventually(() => expect(f.ended()).toBe(true), { timeoutMs: 8000 });
    expect(f.error()).toBeUndefined();
    expect(f.events.at(-1)).toMatchObject({ type: 'executor-offline', executor: 'stalls' });
    await eventually(() => expect(open.size).toBe(0));
  });

  it('ends when its reader leaves in the middle of a stalled body', async () => {
    await running('stalls');
    const controller = new AbortController();
    const before = closedAnswers.stalls;
    const f = follow({ bodyIdleTimeoutMs: 60_000 }, controller.signal);
    await eventually(() => expect(open.size).toBe(1)); // the body is under way, and stalls
    controller.abort();
    await eventually(() => expect(f.ended()).toBe(true), { timeoutMs: 3000 });
    expect(f.error()).toBeUndefined();
    await eventually(() => expect(closedAnswers.stalls).toBe(before + 1));
  });
});
