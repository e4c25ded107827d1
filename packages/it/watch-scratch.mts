import { createZkClient, encodeJson, parseJobConfig, paths } from '@orrery/core';
import { startZooKeeper, eventually, createTcpProxy } from '@orrery/core/testing';
import { startProcess, stopAllProcesses } from './src/index.js';

const server = await startZooKeeper();
const root = '/w';
const zk = createZkClient({ connect: server.connectString, root });
await zk.start();
await zk.mkdirp(paths.jobs('ns'));
await zk.set(paths.namespace('ns'), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
const N = Number(process.env.N ?? 50);
const work: Promise<unknown>[] = [];
for (let i = 0; i < N; i += 1) {
  const name = `j${i}`;
  work.push((async () => {
    await zk.create(paths.job('ns', name), encodeJson(parseJobConfig({ name, type: 'shell', command: 'true', cron: '0 0 1 1 *' })));
    await zk.create(paths.jobShards('ns', name));
    for (const k of [0, 1, 2]) await zk.create(paths.jobShard('ns', name, k), encodeJson({ state: 'idle' }));
  })());
  if (work.length >= 200) await Promise.all(work.splice(0));
}
await Promise.all(work);
const mntr = async () => (await server.fourLetter('mntr')).split('\n').filter((l) => /watch_count|znode_count/.test(l)).join(' ');
console.log('before console', await mntr());
const proxy = await createTcpProxy({ targetPort: server.clientPort });
const proc = startProcess('orrery-console', ['--zk', proxy.connectString, '--root', root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: 'pw-pw-pw-pw-pw-1' });
const line = await proc.waitForLine(/"msg":"console started"/, 60_000);
const url = (JSON.parse(line) as { url: string }).url;
await eventually(async () => { const h = await fetch(`${url}/healthz`); if (!h.ok) throw new Error('x'); }, { timeoutMs: 60_000 });
console.log('console healthy', await mntr());
console.log((await server.fourLetter('wchs')));
await new Promise((r) => setTimeout(r, 5000));
console.log('5 s later', await mntr(), await server.fourLetter('wchs'));
proxy.reset();
const t0 = Date.now();
for (let i = 0; i < 8; i += 1) {
  await new Promise((r) => setTimeout(r, 2000));
  console.log(`+${Date.now() - t0} ms after reset`, await mntr());
}
console.log(proc.lines.filter((l) => !l.includes('"level":30,') || l.includes('connection state')).slice(-20).join('\n'));
await proxy.close();

await stopAllProcesses();
const { readFileSync } = await import('node:fs');
console.log(readFileSync(server.logFile, 'utf8').split('\n').filter((l) => /WARN|ERROR|Len|buffer|closing|Closing/i.test(l)).slice(-12).join('\n'));
await zk.close();
await server.stop();
