// The fence guard on its own (fence-guard.mjs), against the real ZooKeeper of the test run: spawned
// as the session fence spawns it, told about a process group and a live session, then left by its
// executor — with and without a goodbye.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createZkClient, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('fence-guard');
const GUARD = fileURLToPath(new URL('./fence-guard.mjs', import.meta.url));

interface Guard {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

const started: Array<{ kill(): void }> = [];
const clients: ZkClient[] = [];
let server: Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const s of sockets) s.destroy();
  for (const s of started.splice(0)) s.kill();
  for (const c of clients.splice(0)) await c.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function startGuard(): Promise<Guard> {
  const child = fork(GUARD, [], { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv: [] });
  const lines: string[] = [];
  let buffered = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  started.push({ kill: () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL') });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  return { child, lines, exited };
}

/** A process group of a shell and two background sleeps, as a job's would be. */
function startGroup(): number {
  const p = spawn('/bin/sh', ['-c', 'sleep 60 & sleep 60 & wait'], { detached: true, stdio: 'ignore' });
  started.push({ kill: () => { try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* gone */ } } });
  return p.pid!;
}

/** Live (not zombie) members of process group `pgid`. */
function liveMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(group) === pgid && state !== 'Z' && state !== 'X') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function client(): Promise<ZkClient> {
  const zk = createZkClient({ connect: zkConnect, root, sessionTimeoutMs: 30_000 });
  clients.push(zk);
  await zk.start();
  return zk;
}

const send = (g: Guard, m: unknown) => new Promise<void>((resolve) => g.child.send(m as object, () => resolve()));
const msgs = (g: Guard) => g.lines.map((l) => (JSON.parse(l) as { msg: string }).msg);

describe('fence guard', () => {
  it('when its executor dies: kills the tracked group, waits until it is dead, then closes the session (never the other way round)', async () => {
    const admin = await client();
    const victim = await client();
    await victim.create('/presence-1', null, 'ephemeral');
    const pgid = startGroup();
    await eventually(() => expect(liveMembers(pgid).length).toBe(3));
    const guard = await startGuard();
    const { clientId, password } = victim.sessionCredentials();
    // Hostile or malformed messages are ignored, and the guard lives on.
    for (const junk of [null, 'x', 42, { type: 'track', pgid: -1 }, { type: 'track', pgid: 1 }, { type: 'track', pgid: 0 }, { type: 'track', pgid: '7' },
      { type: 'session', connect: zkConnect, timeoutMs: 30_000, sessionId: clientId, password: 'not hex' }, { type: 'deadline', at: 'soon' }]) {
      await send(guard, junk);
    }
    await send(guard, { type: 'track', pgid });
    await send(guard, { type: 'session', connect: zkConnect, timeoutMs: victim.sessionTimeoutMs, sessionId: clientId, password });
    // The presence goes with the session: at that moment no member of the group may live.
    const membersWhenGone = new Promise<number[]>((resolve, reject) => {
      const check = (): void => void admin.exists('/presence-1', () => check()).then((stat) => { if (!stat) resolve(liveMembers(pgid)); }, reject);
      check();
    });
    const lost = new Promise<void>((resolve) => victim.on('state', (s) => { if (s.state === 'LOST') resolve(); }));
    guard.child.disconnect();
    // Well inside the 30 s session timeout: only the guard's close can have ended the session.
    expect(await membersWhenGone).toEqual([]);
    await lost;
    expect(await guard.exited).toBe(0);
    expect(msgs(guard)).toEqual([
      'the executor died: killed its job process groups',
      'every job process is gone',
      "closed the dead executor's ZooKeeper session",
    ]);
    expect(JSON.parse(guard.lines[0]!)).toMatchObject({ groups: 1, name: 'fence-guard' });
    expect(JSON.parse(guard.lines[2]!)).toMatchObject({ sessionId: clientId });
    // The password is in no line it wrote.
    expect(guard.lines.join('\n')).not.toContain(password);
  });

  it('kills a job group it was never told about when it carries the run mark, before it closes the session; an unmarked group is not touched', async () => {
    const admin = await client();
    const victim = await client();
    await victim.create('/presence-mark', null, 'ephemeral');
    const mark = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    // As the executor starts a job: the mark in the environment; but no `track` message reaches the guard.
    const marked = spawn('/bin/sh', ['-c', 'sleep 60 & sleep 60 & wait'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, ORRERY_RUN_MARK: mark } });
    started.push({ kill: () => { try { process.kill(-marked.pid!, 'SIGKILL'); } catch { /* gone */ } } });
    const bystander = startGroup();
    await eventually(() => {
      expect(liveMembers(marked.pid!).length).toBe(3);
      expect(liveMembers(bystander).length).toBe(3);
    });
    const guard = await startGuard();
    const { clientId, password } = victim.sessionCredentials();
    await send(guard, { type: 'mark', value: 'not-a-mark' }); // ignored: not of the mark's form
    await send(guard, { type: 'mark', value: mark });
    await send(guard, { type: 'session', connect: zkConnect, timeoutMs: victim.sessionTimeoutMs, sessionId: clientId, password });
    const membersWhenGone = new Promise<number[]>((resolve, reject) => {
      const check = (): void => void admin.exists('/presence-mark', () => check()).then((stat) => { if (!stat) resolve(liveMembers(marked.pid!)); }, reject);
      check();
    });
    guard.child.disconnect();
    expect(await membersWhenGone).toEqual([]);
    expect(await guard.exited).toBe(0);
    expect(JSON.parse(guard.lines[0]!)).toMatchObject({ groups: 1, untracked: 1 });
    expect(liveMembers(bystander).length).toBe(3);
  });

  it('closes a session that authenticated with digest credentials, and its Orrery-ACL nodes go with it (closing needs no credentials)', async () => {
    const admin = await client();
    const executor = createZkClient({ connect: zkConnect, root, sessionTimeoutMs: 30_000, auth: 'orrery:guard-test-secret' });
    clients.push(executor);
    await executor.start();
    await executor.create('/presence-auth', null, 'ephemeral');
    const guard = await startGuard();
    const { clientId, password } = executor.sessionCredentials();
    await send(guard, { type: 'session', connect: zkConnect, timeoutMs: executor.sessionTimeoutMs, sessionId: clientId, password });
    guard.child.disconnect();
    expect(await guard.exited).toBe(0);
    expect(msgs(guard).at(-1)).toBe("closed the dead executor's ZooKeeper session");
    await eventually(async () => expect(await admin.exists('/presence-auth')).toBeNull(), { timeoutMs: 10_000 });
    expect(guard.lines.join('\n')).not.toContain('guard-test-secret');
  });

  it('at the fence deadline it only kills (the executor may be alive); the session is closed only once the executor is gone', async () => {
    const admin = await client();
    const executor = await client();
    await executor.create('/presence-3', null, 'ephemeral');
    const pgid = startGroup();
    await eventually(() => expect(liveMembers(pgid).length).toBe(3));
    const guard = await startGuard();
    const { clientId, password } = executor.sessionCredentials();
    await send(guard, { type: 'track', pgid });
    await send(guard, { type: 'session', connect: zkConnect, timeoutMs: executor.sessionTimeoutMs, sessionId: clientId, password });
    const fenced = new Promise<unknown>((resolve) => guard.child.on('message', (m) => resolve(m)));
    await send(guard, { type: 'deadline', at: Number(process.hrtime.bigint() / 1_000_000n) + 50 });
    expect(await fenced).toEqual({ type: 'fenced', pgids: [pgid] });
    await eventually(() => expect(liveMembers(pgid)).toEqual([]));
    expect(msgs(guard)).toEqual(["fence deadline passed: killed the executor's job process groups"]);
    // The session is still the executor's.
    expect(await admin.exists('/presence-3')).not.toBeNull();
    expect(guard.child.exitCode).toBeNull();
    guard.child.disconnect();
    expect(await guard.exited).toBe(0);
    await eventually(async () => expect(await admin.exists('/presence-3')).toBeNull(), { timeoutMs: 10_000 });
    expect(msgs(guard).at(-1)).toBe("closed the dead executor's ZooKeeper session");
  });

  it('at the fence deadline it also kills a marked group it was not yet told about; an unmarked one is not touched', async () => {
    const mark = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
    // As the executor starts a job in a burst: the mark in its environment, its `track` not sent yet.
    const marked = spawn('/bin/sh', ['-c', 'sleep 60 & sleep 60 & wait'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, ORRERY_RUN_MARK: mark } });
    started.push({ kill: () => { try { process.kill(-marked.pid!, 'SIGKILL'); } catch { /* gone */ } } });
    const unmarked = startGroup();
    const tracked = startGroup();
    await eventually(() => {
      expect(liveMembers(marked.pid!).length).toBe(3);
      expect(liveMembers(unmarked).length).toBe(3);
      expect(liveMembers(tracked).length).toBe(3);
    });
    const guard = await startGuard();
    await send(guard, { type: 'mark', value: mark });
    await send(guard, { type: 'track', pgid: tracked });
    const fenced = new Promise<unknown>((resolve) => guard.child.on('message', (m) => resolve(m)));
    await send(guard, { type: 'deadline', at: Number(process.hrtime.bigint() / 1_000_000n) + 50 });
    expect(await fenced).toEqual({ type: 'fenced', pgids: [tracked, marked.pid] });
    await eventually(() => {
      expect(liveMembers(tracked)).toEqual([]);
      expect(liveMembers(marked.pid!)).toEqual([]);
    });
    expect(liveMembers(unmarked).length).toBe(3);
  });

  it('after a goodbye it exits and touches neither the groups nor the session', async () => {
    const admin = await client();
    const executor = await client();
    await executor.create('/presence-2', null, 'ephemeral');
    const pgid = startGroup();
    await eventually(() => expect(liveMembers(pgid).length).toBe(3));
    const guard = await startGuard();
    const { clientId, password } = executor.sessionCredentials();
    await send(guard, { type: 'track', pgid });
    await send(guard, { type: 'session', connect: zkConnect, timeoutMs: executor.sessionTimeoutMs, sessionId: clientId, password });
    await send(guard, { type: 'goodbye' });
    expect(await guard.exited).toBe(0);
    expect(guard.lines).toEqual([]);
    expect(liveMembers(pgid).length).toBe(3);
    expect(await admin.exists('/presence-2')).not.toBeNull();
    expect(executor.phase).toBe('connected');
    // The executor closes its own session, once.
    await executor.close();
    await eventually(async () => expect(await admin.exists('/presence-2')).toBeNull());
  });

  it('with no session to close it only kills; with ZooKeeper unreachable it gives up once the session would have expired', async () => {
    const pgid = startGroup();
    await eventually(() => expect(liveMembers(pgid).length).toBe(3));
    const first = await startGuard();
    await send(first, { type: 'track', pgid });
    first.child.disconnect();
    expect(await first.exited).toBe(0);
    // With no session to close it does not wait for the deaths: SIGKILL is sent, not yet delivered.
    await eventually(() => expect(liveMembers(pgid)).toEqual([]));
    expect(msgs(first)).toEqual(['the executor died: killed its job process groups', 'no live ZooKeeper session to close']);

    // A port that accepts and says nothing: the client never attaches.
    server = createServer((socket) => sockets.add(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const second = await startGuard();
    await send(second, { type: 'session', connect: `127.0.0.1:${port}`, timeoutMs: 1000, sessionId: '1234abcd', password: '00'.repeat(16) });
    second.child.disconnect();
    expect(await second.exited).toBe(0);
    expect(msgs(second).at(-1)).toBe('ZooKeeper unreachable until the session would have expired: gave up closing it');
  });
});
