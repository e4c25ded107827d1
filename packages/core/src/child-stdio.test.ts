// stdioWithoutSockets against the real case: the ZooKeeper C client's socket, which is not
// close-on-exec, must not reach a child — also not the socket of a client connected after an
// earlier spawn (the scan is cached for one event-loop turn only).
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { stdioWithoutSockets } from './child-stdio.js';
import { createZkClient, type ZkClient } from './zk/client.js';
import { uniqueRoot } from './testing/index.js';

const zkConnect = inject('zkConnect');
const clients: ZkClient[] = [];
afterEach(async () => {
  while (clients.length) await clients.pop()!.close();
});

/** Descriptors above 2 that a child holds and that are sockets (it lists its own /proc/<pid>/fd). */
async function childSockets(stdio: Parameters<typeof spawn>[2]['stdio']): Promise<number[]> {
  const child = spawn('/bin/sh', ['-c', 'for f in /proc/$$/fd/*; do case "$(readlink "$f")" in socket:*) echo "${f##*/}";; esac; done'], { stdio });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  return out.split('\n').filter(Boolean).map(Number).filter((fd) => fd > 2).sort((a, b) => a - b);
}

async function connected(label: string): Promise<ZkClient> {
  const zk = createZkClient({ connect: zkConnect, root: uniqueRoot(label) });
  clients.push(zk);
  await zk.start();
  await zk.mkdirp('/x');
  return zk;
}

describe('stdioWithoutSockets', () => {
  it('keeps the ZooKeeper socket out of a child, which a plain spawn would hand it', async () => {
    const before = await childSockets(stdioWithoutSockets(['ignore', 'pipe', 'pipe']));
    await connected('stdio');
    // A plain spawn: the child holds the C client's socket.
    expect((await childSockets(['ignore', 'pipe', 'pipe'])).length).toBeGreaterThan(before.length);
    // Without sockets: no socket above stdio at all.
    expect(await childSockets(stdioWithoutSockets(['ignore', 'pipe', 'pipe']))).toEqual([]);
  });

  it('covers a socket opened after an earlier spawn (the cached scan does not outlive its turn)', async () => {
    await connected('stdio-a');
    const first = stdioWithoutSockets(['ignore', 'pipe', 'pipe']);
    await connected('stdio-b');
    const again = stdioWithoutSockets(['ignore', 'pipe', 'pipe']);
    expect((again as unknown[]).length).toBeGreaterThanOrEqual((first as unknown[]).length);
    expect(await childSockets(again)).toEqual([]);
  });
});
