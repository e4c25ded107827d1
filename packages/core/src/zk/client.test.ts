import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, type ConnectionState, type ZkClient } from './client.js';
import { waitForEvent } from '../events.js';
import { createTcpProxy, forceExpireSession, startZooKeeper, uniqueRoot, eventually, type TcpProxy } from '../testing/index.js';

const zkConnect = inject('zkConnect');
const open: Array<{ close(): Promise<void> }> = [];
function track<T extends { close(): Promise<void> }>(thing: T): T {
  open.push(thing);
  return thing;
}
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function connect(connect = zkConnect, root = uniqueRoot('client'), sessionTimeoutMs = 4000): Promise<ZkClient> {
  const client = track(createZkClient({ connect, root, sessionTimeoutMs }));
  await client.start();
  return client;
}

/** A TCP proxy to the test ZooKeeper for the enclosing describe: made before its tests, closed after. */
function proxyForDescribe(): () => TcpProxy {
  let proxy: TcpProxy | undefined;
  beforeAll(async () => {
    const [host, port] = zkConnect.split(':');
    proxy = await createTcpProxy({ targetHost: host, targetPort: Number(port) });
  });
  afterAll(async () => {
    await proxy?.close();
  });
  return () => proxy!;
}

describe('zk client against a real ZooKeeper', () => {
  it('creates, reads, updates and deletes with typed errors', async () => {
    const zk = await connect();
    expect(await zk.create('/a', '{"x":1}')).toBe('/a');
    const { data, stat } = await zk.get('/a');
    expect(data?.toString()).toBe('{"x":1}');
    expect(stat.version).toBe(0);
    await expect(zk.create('/a', 'again')).rejects.toMatchObject({ code: 'node-exists', retryable: false });
    await expect(zk.get('/missing')).rejects.toMatchObject({ code: 'no-node' });
    expect(await zk.exists('/missing')).toBeNull();
    await zk.create('/a/child');
    await expect(zk.delete('/a')).rejects.toMatchObject({ code: 'not-empty' });
    await zk.deleteRecursive('/a');
    expect(await zk.exists('/a')).toBeNull();
  });

  it('rejects a write with a stale version (compare-and-set)', async () => {
    const zk = await connect();
    await zk.create('/cas', 'v0');
    const first = await zk.set('/cas', 'v1', 0);
    expect(first.version).toBe(1);
    await expect(zk.set('/cas', 'v2', 0)).rejects.toMatchObject({ code: 'bad-version' });
    await expect(zk.delete('/cas', 0)).rejects.toMatchObject({ code: 'bad-version' });
    await zk.delete('/cas', 1);
    expect(await zk.exists('/cas')).toBeNull();
  });

  it('keeps every path under its root and creates the root', async () => {
    const root = uniqueRoot('chroot');
    const zk = await connect(zkConnect, `${root}/deep/er`);
    await zk.create('/x', 'in');
    const plain = await connect(zkConnect, '/');
    expect((await plain.get(`${root}/deep/er/x`)).data?.toString()).toBe('in');
    expect(await zk.getChildren('/')).toEqual(['x']);
    await plain.deleteRecursive(root);
  });

  it('fires a watch exactly once, with the relative path', async () => {
    const zk = await connect();
    await zk.create('/w', '0');
    const events: string[] = [];
    await zk.get('/w', (e) => events.push(`${e.type} ${e.path}`));
    await zk.set('/w', '1');
    await zk.set('/w', '2');
    await eventually(() => events.length === 1);
    await zk.getChildren('/w', (e) => events.push(`${e.type} ${e.path}`));
    await zk.create('/w/c');
    await zk.exists('/later', (e) => events.push(`${e.type} ${e.path}`));
    await zk.create('/later');
    await eventually(() => events.length === 3);
    // A little more traffic: no extra firing may appear.
    await zk.set('/w', '3');
    await zk.sync('/w');
    expect(events).toEqual(['changed /w', 'children /w', 'created /later']);
  });

  it('creates sequential and ephemeral nodes', async () => {
    const zk = await connect();
    await zk.create('/seq');
    const a = await zk.create('/seq/n-', null, 'persistent-sequential');
    const b = await zk.create('/seq/n-', null, 'ephemeral-sequential');
    expect(a).toMatch(/^\/seq\/n-\d{10}$/);
    expect(b > a).toBe(true);
    const stat = await zk.exists(b);
    expect(stat?.ephemeralOwner).toBe(zk.sessionId);
  });

  it('fails start() with a clear error when nothing listens', async () => {
    const client = createZkClient({ connect: '127.0.0.1:1', connectTimeoutMs: 500 });
    await expect(client.start()).rejects.toMatchObject({ code: 'connection-loss', message: expect.stringContaining('127.0.0.1:1') });
    await client.close();
  });

  it('close() is idempotent and operations after it fail with `closed`', async () => {
    const zk = await connect();
    await zk.close();
    await zk.close();
    await expect(zk.get('/')).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('zk client sessions', () => {
  const proxyOf = proxyForDescribe();

  it('gets a new session after a server-side expiry, without restarting', async () => {
    const zk = await connect(proxyOf().connectString, uniqueRoot('expiry'), 4000);
    const states: ConnectionState[] = [];
    zk.on('state', (s) => states.push(s.state));
    await zk.create('/eph', 'mine', 'ephemeral');
    const before = zk.sessionId;
    const session = waitForEvent(zk, 'session', { timeoutMs: 20_000 });
    await forceExpireSession(zk, proxyOf(), zkConnect);
    const next = await session;
    expect(next.previousSessionId).toBe(before);
    expect(next.sessionId).not.toBe(before);
    expect(states).toContain('LOST');
    expect(states.at(-1)).toBe('RECONNECTED');
    // The old session's ephemeral node went with it; the new session works.
    expect(await zk.exists('/eph')).toBeNull();
    await zk.create('/eph', 'again', 'ephemeral');
    expect((await zk.exists('/eph'))?.ephemeralOwner).toBe(zk.sessionId);
  });

  it('declares the session LOST after a whole session timeout without a link, then starts a new one', async () => {
    const zk = await connect(proxyOf().connectString, uniqueRoot('blackhole'), 2000);
    const states: ConnectionState[] = [];
    zk.on('state', (s) => states.push(s.state));
    const lost = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'LOST', timeoutMs: 15_000 });
    proxyOf().blackhole();
    await lost;
    expect(states.slice(0, 2)).toEqual(['SUSPENDED', 'LOST']);
    const session = waitForEvent(zk, 'session', { timeoutMs: 15_000 });
    proxyOf().forward();
    await session;
    expect(states.at(-1)).toBe('RECONNECTED');
    await zk.create('/alive');
  });
});

describe('zk client request slots (maxInFlight)', () => {
  const proxyOf = proxyForDescribe();

  it('sends waiting requests in the order they were made, and a probe ahead of them', async () => {
    const zk = track(createZkClient({ connect: proxyOf().connectString, root: uniqueRoot('slots'), sessionTimeoutMs: 10_000, maxInFlight: 2 }));
    await zk.start();
    await zk.create('/seq');
    proxyOf().setDelay(10); // every answer slow: the flood below waits for slots
    try {
      const done: string[] = [];
      const flood = Array.from({ length: 40 }, (_, i) => zk.create('/seq/n-', String(i), 'persistent-sequential').then((path) => {
        done.push(`create ${i}`);
        return path;
      }));
      const probe = zk.probe().then(() => done.push('probe'));
      const paths = await Promise.all(flood);
      await probe;
      // Created in call order (the sequence numbers), each answered in that order...
      const numbers = paths.map((p) => Number(p.slice(-10)));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(done.filter((d) => d !== 'probe')).toEqual(flood.map((_, i) => `create ${i}`));
      // ...and the probe, made last, was answered before most of them: it did not wait for a slot.
      expect(done.indexOf('probe')).toBeLessThan(10);
    } finally {
      proxyOf().setDelay(0);
    }
  });

  it('frees its slots when the link drops: every request settles and the client works after', async () => {
    const zk = track(createZkClient({ connect: proxyOf().connectString, root: uniqueRoot('slots-cut'), sessionTimeoutMs: 6000, maxInFlight: 1 }));
    await zk.start();
    const suspended = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'SUSPENDED', timeoutMs: 15_000 });
    proxyOf().blackhole();
    const settled = Promise.allSettled(Array.from({ length: 5 }, () => zk.get('/')));
    await suspended;
    const back = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'RECONNECTED', timeoutMs: 15_000 });
    proxyOf().forward();
    await back;
    for (const r of await settled) {
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ retryable: true });
    }
    // Five more than the one slot, one after another: none is stuck behind a slot the cut kept.
    for (let i = 0; i < 5; i += 1) expect(await zk.exists('/')).not.toBeNull();
  });

  it('refuses a maxInFlight that is not a whole number of at least 1', () => {
    for (const maxInFlight of [0, -1, 1.5, Number.NaN]) {
      expect(() => createZkClient({ connect: zkConnect, maxInFlight })).toThrow(/maxInFlight must be a whole number of at least 1/);
    }
  });
});

describe('zk client across a ZooKeeper restart', () => {
  it('is SUSPENDED while the server is down and RECONNECTED to the same session after', async () => {
    const server = await startZooKeeper();
    track({ close: () => server.stop() });
    // A session timeout well beyond a JVM restart on a loaded machine: past it, the client rightly
    // declares the session LOST instead (tested above).
    const zk = await connect(server.connectString, uniqueRoot('restart'), 30_000);
    await zk.create('/eph', null, 'ephemeral');
    const sessionId = zk.sessionId;
    const suspended = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'SUSPENDED' });
    await server.kill('SIGKILL');
    await suspended;
    const reconnected = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'RECONNECTED', timeoutMs: 40_000 });
    await server.restart();
    const event = await reconnected;
    expect(event.newSession).toBe(false);
    expect(zk.sessionId).toBe(sessionId);
    // Sessions survive a server restart (they are in its log): the ephemeral node is still there.
    expect((await zk.exists('/eph'))?.ephemeralOwner).toBe(sessionId);
  });
});

describe('zk client with more watches than one request can restore', () => {
  it('re-attaches to the same session without them when the link drops, keeps its ephemeral node, and its watches work again once set again', async () => {
    // A server taking at most 16 KiB per request: 600 watched paths of ~40 bytes are more than
    // the one SetWatches request a reconnect would send (as 70,000 watches are for the default 1 MiB).
    const maxBuffer = 16 * 1024;
    const server = await startZooKeeper({ juteMaxBuffer: maxBuffer });
    track({ close: () => server.stop() });
    const proxy = track(await createTcpProxy({ targetPort: server.clientPort }));
    const root = uniqueRoot('watches');
    const writer = await connect(server.connectString, root);
    const names = Array.from({ length: 600 }, (_, i) => `/watched-node-${String(i).padStart(4, '0')}`);
    for (const name of names) await writer.create(name, 'v0');
    const zk = track(createZkClient({ connect: proxy.connectString, root, sessionTimeoutMs: 8000, serverMaxBuffer: maxBuffer }));
    await zk.start();
    await zk.create('/eph', null, 'ephemeral');
    const sessionId = zk.sessionId;
    const fired: string[] = [];
    const watch = (path: string) => zk.get(path, (e) => fired.push(e.path));
    for (const name of names) await watch(name);
    const notices: string[] = [];
    zk.on('error', (e) => notices.push(e.message));
    const states: Array<{ state: ConnectionState; newSession: boolean; watchesLost: boolean }> = [];
    zk.on('state', ({ state, newSession, watchesLost }) => states.push({ state, newSession, watchesLost }));
    const session = waitForEvent(zk, 'session', { timeoutMs: 20_000 });
    proxy.reset();
    // The same session, over a new handle, with no watch restored.
    expect(await session).toMatchObject({ sessionId, previousSessionId: sessionId, reattached: true });
    expect(zk.sessionId).toBe(sessionId);
    expect(states).toEqual([
      { state: 'SUSPENDED', newSession: false, watchesLost: false },
      { state: 'RECONNECTED', newSession: false, watchesLost: true },
    ]);
    expect(notices.join('\n')).toMatch(/600 watched paths .* more than the 16384 the server takes in one request/);
    expect((await zk.exists('/eph'))?.ephemeralOwner).toBe(sessionId);
    // The old watches are gone (the server holds none of this session's); set again, they fire.
    await eventually(async () => expect(await server.fourLetter('wchs')).toMatch(/watching 0 paths|Total watches:0/));
    for (const name of names) await watch(name);
    await writer.set(names[123]!, 'v1');
    await eventually(() => expect(fired).toEqual([names[123]]));
    // And the client works: a later link drop (still too many watches) goes the same way.
    const again = waitForEvent(zk, 'session', { timeoutMs: 20_000 });
    proxy.reset();
    expect(await again).toMatchObject({ sessionId, reattached: true });
    expect((await zk.exists('/eph'))?.ephemeralOwner).toBe(sessionId);
  }, 60_000);
});
