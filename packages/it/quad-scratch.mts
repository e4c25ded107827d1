// How long the C client blocks the event loop when the link drops, by the number of watches held.
import { createZkClient } from '@orrery/core';
import { startZooKeeper, createTcpProxy } from '@orrery/core/testing';

const server = await startZooKeeper();
const writer = createZkClient({ connect: server.connectString, root: '/q' });
await writer.start();
const max = Number(process.env.MAX ?? 40000);
const work: Promise<unknown>[] = [];
for (let i = 0; i < max; i += 1) {
  work.push(writer.create(`/n${i}`, 'x'));
  if (work.length >= 500) await Promise.all(work.splice(0));
}
await Promise.all(work);
for (const n of (process.env.SIZES ?? '5000,10000,20000,40000').split(',').map(Number)) {
  const proxy = await createTcpProxy({ targetPort: server.clientPort });
  const zk = createZkClient({ connect: proxy.connectString, root: '/q', sessionTimeoutMs: 60_000, serverMaxBuffer: 1 << 30 });
  await zk.start();
  for (let i = 0; i < n; i += 500) await Promise.all(Array.from({ length: Math.min(500, n - i) }, (_, k) => zk.get(`/n${i + k}`, () => undefined)));
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => { const now = performance.now(); maxGap = Math.max(maxGap, now - last); last = now; }, 10);
  const t0 = performance.now();
  const suspended = new Promise<number>((resolve) => zk.on('state', (s) => { if (s.state === 'SUSPENDED') resolve(performance.now() - t0); }));
  const reconnected = new Promise<number>((resolve) => zk.on('state', (s) => { if (s.state === 'RECONNECTED') resolve(performance.now() - t0); }));
  proxy.reset();
  const s = await suspended;
  const r = await reconnected;
  clearInterval(timer);
  console.log(`${n} watches: SUSPENDED after ${s.toFixed(0)} ms, RECONNECTED after ${r.toFixed(0)} ms, longest event-loop stall ${maxGap.toFixed(0)} ms`);
  await zk.close();
  await proxy.close();
}
await writer.close();
await server.stop();
