// Digest authentication and Orrery's ACL, against a real ZooKeeper; and the client's node-size limit.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createZkClient, digestId, parseZkAuth, ZK_NODE_MAX_BYTES, ZK_PERMS, type ZkClient, type ZkClientOptions } from './client.js';
import { createTcpProxy, startZooKeeper, uniqueRoot } from '../testing/index.js';

const zkConnect = inject('zkConnect');
const AUTH = 'orrery:correct-horse-battery';
const open: ZkClient[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function connect(root: string, options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  const zk = createZkClient({ connect: zkConnect, root, sessionTimeoutMs: 4000, ...options });
  open.push(zk);
  await zk.start();
  return zk;
}

describe('digest credentials', () => {
  it.each([
    ['orrery:longenough', true],
    ['a.b-c_d:12345678', true],
    ['orrery:short', false],
    [':password123', false],
    ['no-colon-at-all', false],
    ['bad user:password123', false],
  ])('parses %j → valid %s', (text, valid) => {
    if (valid) expect(parseZkAuth(text).user).toBe(text.split(':')[0]);
    else expect(() => parseZkAuth(text)).toThrow(/USER:PASSWORD/);
  });

  it('computes the id ZooKeeper gives a digest identity', () => {
    // ZooKeeper's DigestAuthenticationProvider.generateDigest("super:test") (its documentation's example).
    expect(digestId('super', 'test')).toBe('super:D/InIHSb7yEEbrWz8b9l71RjZJU=');
  });
});

describe('a tree created with ZooKeeper digest credentials', () => {
  it('gives every node it creates Orrery ACL: all for the identity, nothing for anyone else', async () => {
    const root = uniqueRoot('acl');
    const zk = await connect(root, { auth: AUTH });
    await zk.mkdirp('/namespaces/shop/jobs');
    await zk.create('/namespaces/shop/jobs/backup', '{"command":"echo hi"}');
    const seq = await zk.create('/namespaces/shop/jobs/backup/cmd-', '{}', 'persistent-sequential');
    const eph = await zk.create('/namespaces/shop/eph', 'x', 'ephemeral');
    const [user, password] = [AUTH.slice(0, AUTH.indexOf(':')), AUTH.slice(AUTH.indexOf(':') + 1)];
    const expected = [{ perms: ZK_PERMS.all, scheme: 'digest', id: digestId(user, password) }];
    for (const path of ['/', '/namespaces', '/namespaces/shop/jobs', '/namespaces/shop/jobs/backup', seq, eph]) {
      expect((await zk.getAcl(path)).acl, path).toEqual(expected);
    }
    // The client goes on working across its own nodes.
    await zk.set('/namespaces/shop/jobs/backup', '{"command":"echo changed"}', 0);
    expect((await zk.get('/namespaces/shop/jobs/backup')).data?.toString()).toContain('changed');
  });

  it('refuses a client without the credentials, or with others: no read, no write, no create, no delete', async () => {
    const root = uniqueRoot('acl');
    const zk = await connect(root, { auth: AUTH });
    await zk.mkdirp('/namespaces/shop/jobs');
    await zk.create('/namespaces/shop/jobs/backup', '{"command":"echo hi"}');
    for (const options of [{}, { auth: 'orrery:wrong-password' }, { auth: 'intruder:correct-horse-battery' }]) {
      const other = await connect(root, options);
      await expect(other.set('/namespaces/shop/jobs/backup', '{"command":"rm -rf /"}')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(other.get('/namespaces/shop/jobs/backup')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(other.getChildren('/namespaces/shop/jobs')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(other.create('/namespaces/shop/jobs/evil', '{}')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(other.delete('/namespaces/shop/jobs/backup')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(other.setAcl('/namespaces/shop/jobs/backup', [{ perms: ZK_PERMS.all, scheme: 'world', id: 'anyone' }])).rejects.toMatchObject({ code: 'no-auth' });
    }
    const { data, stat } = await zk.get('/namespaces/shop/jobs/backup');
    expect(data?.toString()).toBe('{"command":"echo hi"}');
    expect(stat.version).toBe(0);
    expect(await zk.getChildren('/namespaces/shop/jobs')).toEqual(['backup']);
  });

  it('secures a node it meets still open (its creator was cut off before setting the ACL), and accepts one another Orrery client secured', async () => {
    const root = uniqueRoot('acl');
    const open = await connect(root); // no credentials: makes nodes with the open ACL, as a create cut short would leave them
    await open.create('/left-open', 'x');
    const zk = await connect(root, { auth: AUTH });
    await expect(zk.create('/left-open', 'y')).rejects.toMatchObject({ code: 'node-exists' });
    const [user, password] = [AUTH.slice(0, AUTH.indexOf(':')), AUTH.slice(AUTH.indexOf(':') + 1)];
    expect((await zk.getAcl('/left-open')).acl).toEqual([{ perms: ZK_PERMS.all, scheme: 'digest', id: digestId(user, password) }]);
    await expect(open.set('/left-open', 'z')).rejects.toMatchObject({ code: 'no-auth' });
    // Secured already by another Orrery client: secure() accepts it (no error, nothing removed).
    const other = await connect(root, { auth: AUTH });
    await other.secure('/left-open');
    expect((await zk.get('/left-open')).data?.toString()).toBe('x');
  });

  it('a second client with the same credentials reads and writes what the first created', async () => {
    const root = uniqueRoot('acl');
    const a = await connect(root, { auth: AUTH });
    await a.create('/x', 'one');
    const b = await connect(root, { auth: AUTH });
    await b.set('/x', 'two', 0);
    expect((await a.get('/x')).data?.toString()).toBe('two');
  });
});

describe('node size', () => {
  it(`refuses to write more than ${ZK_NODE_MAX_BYTES} bytes to a node, before sending anything`, async () => {
    const zk = await connect(uniqueRoot('size'));
    await expect(zk.create('/big', Buffer.alloc(ZK_NODE_MAX_BYTES + 1, 120))).rejects.toMatchObject({ code: 'bad-arguments', details: { limit: ZK_NODE_MAX_BYTES } });
    expect(await zk.exists('/big')).toBeNull();
    await zk.create('/big', Buffer.alloc(ZK_NODE_MAX_BYTES, 120));
    await expect(zk.set('/big', Buffer.alloc(ZK_NODE_MAX_BYTES + 1, 121))).rejects.toMatchObject({ code: 'bad-arguments' });
    const { data, stat } = await zk.get('/big');
    expect(data?.length).toBe(ZK_NODE_MAX_BYTES);
    expect(stat.version).toBe(0);
    expect(zk.phase).toBe('connected');
  });
});

describe('large replies over a slow, fragmenting link', () => {
  it('reads 20,000 children and a 1 MB node in many small pieces without any change of connection state', async () => {
    const server = await startZooKeeper({ juteMaxBuffer: 4 * 1024 * 1024 });
    const proxy = await createTcpProxy({ targetPort: server.clientPort });
    try {
      const root = uniqueRoot('large');
      const direct = createZkClient({ connect: server.connectString, root, maxDataBytes: 2 * 1024 * 1024 });
      open.push(direct);
      await direct.start();
      await direct.create('/big', Buffer.alloc(1024 * 1024, 120));
      await direct.create('/many');
      const names = Array.from({ length: 20_000 }, (_, i) => `child-with-a-longish-name-${String(i).padStart(5, '0')}`);
      for (let i = 0; i < names.length; i += 500) await Promise.all(names.slice(i, i + 500).map((n) => direct.create(`/many/${n}`)));

      const zk = createZkClient({ connect: proxy.connectString, root, sessionTimeoutMs: 20_000 });
      open.push(zk);
      const states: string[] = [];
      zk.on('state', (s) => states.push(s.state));
      await zk.start();
      // About a kilobyte every millisecond: each reply arrives in hundreds of reads.
      proxy.setFragments({ bytes: 1024, intervalMs: 1 });
      const { data } = await zk.get('/big');
      expect(data?.length).toBe(1024 * 1024);
      const children = await zk.getChildren('/many');
      expect(children).toHaveLength(20_000);
      expect(states).toEqual(['CONNECTED']);
      expect(zk.phase).toBe('connected');
    } finally {
      await proxy.close();
      await server.stop();
    }
  });
});
