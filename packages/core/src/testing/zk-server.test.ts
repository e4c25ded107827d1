import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createZkClient } from '../zk/client.js';
import { isProcessAlive } from '../process-alive.js';
import { waitForEvent } from '../events.js';
import { startEnsemble, startZooKeeper } from './zk-server.js';
import { eventually } from './eventually.js';
import { uniqueRoot } from './unique-root.js';


describe('ZooKeeper launcher', () => {
  it('starts a standalone server on a free port, and stop() ends it by pid and removes its data', async () => {
    const server = await startZooKeeper();
    expect(server.clientPort).not.toBe(2181);
    expect(await server.fourLetter('ruok')).toBe('imok');
    expect(await server.mode()).toBe('standalone');
    expect(isProcessAlive(server.pid)).toBe(true);
    await server.stop();
    expect(isProcessAlive(server.pid)).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
    await server.stop(); // idempotent
  });

  it('with a dir of its own (npm start), keeps its data across a stop and a start, and never removes it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'zk-kept-')), 'zookeeper');
    const first = await startZooKeeper({ dir });
    const zk = createZkClient({ connect: first.connectString, root: '/' });
    await zk.start();
    await zk.create('/kept', Buffer.from('still here'));
    await zk.close();
    await first.stop();
    expect(existsSync(dir)).toBe(true);
    // Again, on the port of last time (which the caller asks for).
    const second = await startZooKeeper({ dir, clientPort: first.clientPort });
    try {
      expect(second.connectString).toBe(first.connectString);
      const again = createZkClient({ connect: second.connectString, root: '/' });
      await again.start();
      expect((await again.get('/kept')).data?.toString()).toBe('still here');
      await again.close();
      // A port asked for that is taken fails the start, naming the log (no other port is tried).
      await expect(startZooKeeper({ dir: join(dir, '..', 'other'), clientPort: second.clientPort, startTimeoutMs: 5000 })).rejects.toThrow(/ZooKeeper/);
    } finally {
      await second.stop();
    }
    expect(existsSync(join(dir, 'server-1', 'data'))).toBe(true);
  });

  it('leaves no server and no data behind when the process that started it is killed with SIGKILL', async () => {
    const script = fileURLToPath(new URL('./zk-orphan-fixture.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [pid, dataDir] = await new Promise<[number, string]>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /zookeeper-pid (\d+) dir (\S+)\n/.exec(out);
        if (m) resolve([Number(m[1]), m[2]!]);
      });
      child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
    });
    expect(isProcessAlive(pid)).toBe(true);
    child.kill('SIGKILL');
    await eventually(() => expect(isProcessAlive(pid)).toBe(false), { timeoutMs: 10_000 });
    await eventually(() => expect(existsSync(dataDir)).toBe(false), { timeoutMs: 10_000 });
  });

  it('runs a 3-node ensemble that survives the loss of its leader', async () => {
    const ensemble = await startEnsemble(3);
    const zk = createZkClient({ connect: ensemble.connectString, root: uniqueRoot('ensemble'), sessionTimeoutMs: 6000 });
    try {
      await zk.start();
      await zk.create('/before', 'x');
      const modes = await Promise.all(ensemble.servers.map((s) => s.mode()));
      expect(modes.sort()).toEqual(['follower', 'follower', 'leader']);
      const leader = await ensemble.leader();
      await leader.kill('SIGKILL');
      await ensemble.waitForQuorum();
      const newLeader = await ensemble.leader();
      expect(newLeader).not.toBe(leader);
      // The client carries on (same session, or reconnected) and the data survived.
      await eventually(async () => expect((await zk.get('/before')).data?.toString()).toBe('x'), { timeoutMs: 20_000 });
      await zk.create('/after', 'y');
      // The killed member rejoins as a follower.
      const rejoined = leader.restart().then(() => ensemble.waitForQuorum());
      await rejoined;
      await eventually(async () => expect(await leader.mode()).toBe('follower'), { timeoutMs: 20_000 });
    } finally {
      await zk.close();
      await ensemble.stop();
    }
    for (const s of ensemble.servers) expect(isProcessAlive(s.pid)).toBe(false);
  });

  it('keeps sessions and data across a kill -9 and restart of a standalone server', async () => {
    const server = await startZooKeeper();
    const zk = createZkClient({ connect: server.connectString, root: uniqueRoot('restart'), sessionTimeoutMs: 8000 });
    try {
      await zk.start();
      await zk.create('/durable', 'd');
      const oldPid = server.pid;
      const reconnected = waitForEvent(zk, 'state', { predicate: (s) => s.state === 'RECONNECTED', timeoutMs: 20_000 });
      await server.kill();
      expect(isProcessAlive(oldPid)).toBe(false);
      await server.restart();
      await reconnected;
      expect(server.pid).not.toBe(oldPid);
      expect((await zk.get('/durable')).data?.toString()).toBe('d');
    } finally {
      await zk.close();
      await server.stop();
    }
  });
});
