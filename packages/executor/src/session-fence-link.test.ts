// The self-fence over a real ZooKeeper link that breaks and comes back: after a SUSPENDED, nothing
// starts on the old link's deadline — only once a probe sent after the reconnect has been answered.
import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createZkClient, waitForEvent, type ZkClient } from '@orrery/core';
import { createTcpProxy, eventually, uniqueRoot, type TcpProxy } from '@orrery/core/testing';
import { createSessionFence, type SessionFence } from './session-fence.js';

const zkConnect = inject('zkConnect');
let proxy: TcpProxy;
let zk: ZkClient;
let fence: SessionFence;
const fenced: string[] = [];

beforeAll(async () => {
  proxy = await createTcpProxy({ targetPort: Number(zkConnect.split(':').at(-1)) });
  zk = createZkClient({ connect: proxy.connectString, root: uniqueRoot('fence-link'), sessionTimeoutMs: 6000 });
  await zk.start();
  fence = createSessionFence({ zk, logger: pino({ level: 'silent' }), killGraceMs: 1000, guard: false, onFence: (reason) => fenced.push(reason) });
  await fence.start();
}, 30_000);

afterAll(async () => {
  await fence?.close();
  await zk?.close();
  await proxy?.close();
});

it('a reconnect to the same session lets runs start again only after a probe sent over the new link is answered', async () => {
  expect(fence.canStart()).toBe(true);
  const before = fence.deadline!;
  const seen: Array<{ state: string; canStart: boolean }> = [];
  const off = zk.on('state', (s) => {
    seen.push({ state: s.state, canStart: fence.canStart() });
  });
  try {
    const reconnected = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'RECONNECTED', timeoutMs: 30_000 });
    // The connection drops and the client reconnects at once: the old deadline is still well ahead.
    proxy.reset();
    const s = await reconnected;
    expect(s.newSession).toBe(false);
    // Neither while suspended nor at the reconnect itself (no probe has crossed the new link yet)...
    expect(seen.map((e) => e.state)).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(seen.every((e) => !e.canStart)).toBe(true);
    // ...then as soon as one has, with a deadline the new answer put further ahead.
    await eventually(() => expect(fence.canStart()).toBe(true), { timeoutMs: 5000 });
    expect(fence.deadline!).toBeGreaterThan(before);
    expect(fenced).toEqual([]);
  } finally {
    off();
  }
}, 60_000);
