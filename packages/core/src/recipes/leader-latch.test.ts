import { describe, expect, inject, it } from 'vitest';
import { createLeaderLatch, type LeaderLatch } from './leader-latch.js';
import { waitForEvent } from '../events.js';
import { eventually, forceExpireSession, fourLetterWord, notingCreates, uniqueRoot } from '../testing/index.js';
import { client, onCleanup, proxyFor } from './test-support.js';

const zkConnect = inject('zkConnect');
const zkPort = Number(zkConnect.split(':')[1]);
const proxy = proxyFor(zkConnect);

function latch(zk: Parameters<typeof createLeaderLatch>[0], id: string): LeaderLatch {
  const l = createLeaderLatch(zk, '/latch', { id });
  onCleanup(() => l.close());
  return l;
}

describe('leader latch', () => {
  it('elects the first participant, and hands over when the leader closes', async () => {
    const root = uniqueRoot('latch');
    const a = latch(await client(zkConnect, root), 'a');
    const b = latch(await client(zkConnect, root), 'b');
    await a.start();
    const epochA = await a.awaitLeadership();
    await b.start();
    expect(b.isLeader).toBe(false);
    expect(await a.participants()).toEqual(['a', 'b']);
    const lost = waitForEvent(a, 'leader:lost');
    const won = b.awaitLeadership();
    await a.close();
    expect((await lost).reason).toBe('closed');
    const epochB = await won;
    expect(epochB).toBeGreaterThan(epochA);
    expect(await b.participants()).toEqual(['b']);
  });

  it('closed before its session ends, leaves its node to the session: leadership ends at once, the next participant leads when the session closes', async () => {
    const root = uniqueRoot('latch-session-ending');
    const zkA = await client(zkConnect, root);
    const a = latch(zkA, 'a');
    const b = latch(await client(zkConnect, root), 'b');
    await a.start();
    await a.awaitLeadership();
    await b.start();
    const lost = waitForEvent(a, 'leader:lost');
    await a.close({ sessionEnding: true });
    expect((await lost).reason).toBe('closed');
    expect(a.isLeader).toBe(false);
    // No delete was sent: a's node is still there, and b still waits behind it.
    expect(await b.participants()).toEqual(['a', 'b']);
    expect(b.isLeader).toBe(false);
    const won = b.awaitLeadership();
    await zkA.close();
    await won;
    expect(await b.participants()).toEqual(['b']);
  });

  it("takes the lead with its own node's czxid as the epoch; a leader whose node is deleted by hand steps down and joins again behind", async () => {
    const root = uniqueRoot('latch-by-hand');
    const zkA = await client(zkConnect, root);
    const zkB = await client(zkConnect, root);
    const a = latch(zkA, 'a');
    const b = latch(zkB, 'b');
    await a.start();
    await a.awaitLeadership();
    await b.start();
    const nodeOf = async (id: string): Promise<string> => {
      for (const child of await zkA.getChildren('/latch')) if ((await zkA.get(`/latch/${child}`)).data?.toString() === id) return `/latch/${child}`;
      throw new Error(`no latch node of ${id}`);
    };
    const bNode = await nodeOf('b');
    // b read its node's czxid while waiting: the epoch it takes the lead with.
    const aLost = waitForEvent(a, 'leader:lost');
    const bWon = b.awaitLeadership();
    await zkA.delete(await nodeOf('a'));
    expect((await aLost).reason).toBe('deleted');
    expect(await bWon).toBe((await zkB.exists(bNode))!.czxid);
    await eventually(async () => expect(await b.participants()).toEqual(['b', 'a']));
    // The new leader watches its own node too: deleted by hand, it steps down and a leads again.
    const bLost = waitForEvent(b, 'leader:lost');
    const aWon = a.awaitLeadership();
    await zkA.delete(bNode);
    expect((await bLost).reason).toBe('deleted');
    await aWon;
    await eventually(async () => expect(await a.participants()).toEqual(['a', 'b']));
  });

  it("hands over when the leader's session expires, and the old leader re-joins behind", async () => {
    const root = uniqueRoot('latch-expiry');
    const zkA = await client(proxy().connectString, root, 3000);
    const a = latch(zkA, 'a');
    const b = latch(await client(zkConnect, root), 'b');
    await a.start();
    await a.awaitLeadership();
    await b.start();
    const aLost = waitForEvent(a, 'leader:lost');
    const bWon = b.awaitLeadership(20_000);
    await forceExpireSession(zkA, proxy(), zkConnect);
    await aLost;
    await bWon;
    expect(a.isLeader).toBe(false);
    // The old leader joins again with its new session, behind the new leader.
    await eventually(async () => expect(await b.participants()).toEqual(['b', 'a']), { timeoutMs: 15_000 });
    expect(a.isLeader).toBe(false);
  });

  it('drops leadership as soon as the link is SUSPENDED, before the session can expire', async () => {
    const root = uniqueRoot('latch-suspend');
    const zkA = await client(proxy().connectString, root, 4000);
    const a = latch(zkA, 'a');
    const b = latch(await client(zkConnect, root), 'b');
    await a.start();
    await a.awaitLeadership();
    await b.start();
    const lostAt = waitForEvent(a, 'leader:lost', { timeoutMs: 10_000 }).then((e) => ({ ...e, at: Date.now() }));
    const wonAt = b.awaitLeadership(20_000).then(() => Date.now());
    proxy().blackhole();
    try {
      const lost = await lostAt;
      expect(lost.reason).toBe('suspended');
      // b can only lead after a's session expired on the server, which is after a stepped down.
      expect(await wonAt).toBeGreaterThan(lost.at);
    } finally {
      proxy().reset();
      proxy().forward();
    }
  });

  it('watches only its predecessor (no herd): five watches for five participants', async () => {
    const root = uniqueRoot('latch-herd');
    const latches: LeaderLatch[] = [];
    for (const id of ['p0', 'p1', 'p2', 'p3', 'p4']) {
      const l = latch(await client(zkConnect, root), id);
      await l.start();
      latches.push(l);
    }
    await latches[0]!.awaitLeadership();
    await eventually(async () => {
      const wchp = await fourLetterWord(zkPort, 'wchp');
      // wchp: a path line, then one line per session watching it.
      const counts = new Map<string, number>();
      let current = '';
      for (const line of wchp.split('\n')) {
        if (line.startsWith('/')) current = line.trim();
        else if (line.trim().startsWith('0x') && current.startsWith(`${root}/latch/`)) counts.set(current, (counts.get(current) ?? 0) + 1);
      }
      // 5 participants: the leader watches its own node (to see it deleted), each follower only its
      // predecessor — so 5 watches in all, the leader's node has 2, the last node none.
      expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(5);
      expect(Math.max(...counts.values())).toBe(2);
      expect(counts.size).toBe(4);
    });
  });
  it('without createParents: a latch path that exists costs no create of it; a missing one is made while its parent exists; a missing parent is never brought back', async () => {
    const root = uniqueRoot('latch-no-parents');
    const real = await client(zkConnect, root);
    const { zk, created } = notingCreates(real);
    const join = async (path: string, id: string): Promise<LeaderLatch> => {
      const l = createLeaderLatch(zk, path, { id, createParents: false });
      onCleanup(() => l.close());
      await l.start();
      return l;
    };
    await real.mkdirp('/job/leader');
    const first = await join('/job/leader', 'a');
    await first.awaitLeadership();
    expect(created).toHaveLength(1);
    expect(created[0]).toMatch(/^\/job\/leader\/latch-/);

    // The latch path missing, its parent there: made, then joined.
    created.length = 0;
    await real.mkdirp('/other');
    const second = await join('/other/leader', 'b');
    await second.awaitLeadership();
    expect(created.filter((p) => p === '/other/leader')).toHaveLength(1);
    expect(await real.exists('/other/leader')).not.toBeNull();

    // Its parent missing too (a deleted job): nothing is made, and the latch does not lead.
    created.length = 0;
    const orphan = createLeaderLatch(zk, '/gone/leader', { id: 'c', createParents: false });
    onCleanup(() => orphan.close());
    await orphan.start().catch(() => undefined);
    await eventually(() => expect(created).toContain('/gone/leader'));
    expect(await real.exists('/gone')).toBeNull();
    expect(await real.exists('/gone/leader')).toBeNull();
    expect(orphan.isLeader).toBe(false);
  });
});
