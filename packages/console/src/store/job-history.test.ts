// The config history store against a real ZooKeeper: versions kept newest first and bounded by
// JOB_HISTORY_LIMIT, version 0 starting a new history, and a failure to record logged without
// undoing the write it follows.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, historyVersionName, parseHistoryVersionName, paths, parseJobConfig, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { JOB_HISTORY_LIMIT, listJobHistory, readJobVersion, recordJobVersion } from './job-history.js';
import { createJob, setJobEnabled } from './jobs.js';
import { createNamespace } from './namespaces.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('job-history');
let zk: ZkClient;
let other: ZkClient;
const config = parseJobConfig({ name: 'tick', type: 'shell', command: 'true' });

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root });
  other = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await other.start();
  await createNamespace(zk, 'ns');
});
afterAll(async () => {
  await other.close();
  await zk.close();
});

describe('history node names', () => {
  it.each([[0, '0000000000'], [7, '0000000007'], [2_147_483_647, '2147483647']])('version %i is %s and back', (version, name) => {
    expect(historyVersionName(version)).toBe(name);
    expect(parseHistoryVersionName(name)).toBe(version);
  });
  it.each([-1, 1.5, 2_147_483_648, Number.NaN])('refuses version %s', (version) => {
    expect(() => historyVersionName(version)).toThrow(/version/);
  });
  it.each(['7', '00000000007', '000000000x', '9999999999', '../0000000'])('reads no version from %s', (name) => {
    expect(parseHistoryVersionName(name)).toBeUndefined();
  });
});

describe('recordJobVersion', () => {
  it(`keeps the newest ${JOB_HISTORY_LIMIT} versions, newest first, with author and time`, async () => {
    for (let version = 0; version < JOB_HISTORY_LIMIT + 3; version += 1) {
      expect(await recordJobVersion(zk, 'ns', 'tick', { version, author: `user-${version % 2}`, at: 1000 + version, config })).toBe(true);
    }
    const versions = await listJobHistory(zk, 'ns', 'tick');
    expect(versions).toHaveLength(JOB_HISTORY_LIMIT);
    expect(versions[0]).toEqual({ version: JOB_HISTORY_LIMIT + 2, author: 'user-0', at: 1000 + JOB_HISTORY_LIMIT + 2 });
    expect(versions.at(-1)?.version).toBe(3);
    expect(await readJobVersion(zk, 'ns', 'tick', 2)).toBeUndefined();
    expect(await readJobVersion(zk, 'ns', 'tick', 10)).toEqual({ version: 10, author: 'user-0', at: 1010, config });
  });

  it('starts a new history at version 0 (a job created again under the same name)', async () => {
    await recordJobVersion(zk, 'ns', 'tick', { version: 0, author: 'again', at: 5, config });
    expect(await listJobHistory(zk, 'ns', 'tick')).toEqual([{ version: 0, author: 'again', at: 5 }]);
  });

  it('lists an unreadable history node with its problem', async () => {
    await zk.create(paths.jobHistoryVersion('ns', 'tick', 1), Buffer.from('{"version": 1}'));
    const [broken] = await listJobHistory(zk, 'ns', 'tick');
    expect(broken).toMatchObject({ version: 1, problem: expect.stringContaining('author') });
    await expect(readJobVersion(zk, 'ns', 'tick', 1)).rejects.toMatchObject({ code: 'bad-data' });
  });

  it('logs a failure to record and never undoes the write it follows', async () => {
    await createJob(zk, 'ns', { name: 'fragile', type: 'shell', command: 'true' }, { author: 'ann' });
    // The history node is an ephemeral node of another session: no version can be recorded under it.
    await zk.deleteRecursive(paths.jobHistory('ns', 'fragile'));
    await other.create(paths.jobHistory('ns', 'fragile'), null, 'ephemeral');
    const warned: Array<{ object: Record<string, unknown>; message: string }> = [];
    const changed = await setJobEnabled(zk, 'ns', 'fragile', true, { author: 'ann', logger: { warn: (object, message) => warned.push({ object, message }) } });
    expect(changed).toBe(true);
    expect(parseJobConfig(JSON.parse((await zk.get(paths.job('ns', 'fragile'))).data!.toString())).enabled).toBe(true);
    expect(warned).toEqual([{ object: expect.objectContaining({ namespace: 'ns', job: 'fragile', version: 1 }), message: expect.stringContaining('not recorded') }]);
  });
});
