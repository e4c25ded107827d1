// The job routes against a real ZooKeeper: create, get, update (compare-and-set), delete, copy,
// enable, disable, run, stop, list (filter, paging) and batch (all or nothing); each error shape
// (400 naming field and rule with nothing written, 404, 409 with the current config, 403 per role);
// and a write through one console seen through another console's cache within 1 s.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodeJson, paths } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { createNamespace } from '../../store/namespaces.js';
import { startTestConsole, type TestConsole } from './job-test-support.js';

const zkConnect = inject('zkConnect');
let c: TestConsole;
const url = (path = '') => `/api/v1/namespaces/shop/jobs${path}`;
const shell = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'shell', command: 'echo hi', ...extra });

/** The stored job node, straight from ZooKeeper. */
async function stored(name: string): Promise<{ config: Record<string, unknown>; version: number } | undefined> {
  const stat = await c.zk.exists(paths.job('shop', name));
  if (!stat) return undefined;
  const node = await c.zk.get(paths.job('shop', name));
  return { config: JSON.parse(node.data!.toString()) as Record<string, unknown>, version: node.stat.version };
}

/** Waits until the cache shows the job at `version` (writes reach reads through watches). */
async function cached(name: string, version: number): Promise<void> {
  await eventually(() => expect(c.cache.job('shop', name)?.config.stat.version).toBe(version), { timeoutMs: 5000 });
}

beforeAll(async () => {
  c = await startTestConsole(zkConnect, 'job-routes');
  await createNamespace(c.zk, 'shop');
  await eventually(() => expect(c.cache.namespace('shop')).toBeDefined());
});
afterAll(async () => {
  await c.close();
});

describe('create', () => {
  it('creates a job (owner), audited, with its version 0; an existing one is a 409', async () => {
    const created = await c.as('ann', { method: 'POST', url: url(), payload: shell('report', { cron: '0 3 * * *', groups: ['nightly'] }) });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ name: 'report', version: 0, changed: true, config: { name: 'report', enabled: false, cron: '0 3 * * *' } });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.create', namespace: 'shop', job: 'report', after: { name: 'report' } });
    expect((await stored('report'))?.version).toBe(0);
    const again = await c.as('ann', { method: 'POST', url: url(), payload: shell('report') });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'already-exists', details: { job: 'report' } });
  });

  it('reads its writes: a GET right after a create, an update or a delete answers what was written', async () => {
    for (let i = 0; i < 20; i++) {
      const name = `ryw-${i}`;
      expect((await c.as('ann', { method: 'POST', url: url(), payload: shell(name, { cron: '0 3 * * *' }) })).statusCode).toBe(201);
      expect((await c.as('vic', { method: 'GET', url: url(`/${name}`) })).json()).toMatchObject({ name, version: 0 });
      const put = await c.as('ann', { method: 'PUT', url: url(`/${name}`), payload: { version: 0, config: shell(name, { cron: '0 4 * * *' }) } });
      expect(put.statusCode, put.body).toBe(200);
      expect((await c.as('vic', { method: 'GET', url: url(`/${name}`) })).json()).toMatchObject({ version: 1, config: { cron: '0 4 * * *' } });
      expect((await c.as('ann', { method: 'DELETE', url: url(`/${name}`) })).statusCode).toBe(204);
      expect((await c.as('vic', { method: 'GET', url: url(`/${name}`) })).statusCode).toBe(404);
    }
  });

  it('answers 400 naming every field and rule at once, and writes nothing', async () => {
    const bad = await c.as('ann', { method: 'POST', url: url(), payload: { name: 'broken-one', type: 'shell', command: 'x', cron: '61 * * * *', shardingTotalCount: 'three', shardingCount: 2 } });
    expect(bad.statusCode).toBe(400);
    const issues = bad.json().error.details.issues as Array<{ field: string; rule: string; message: string }>;
    expect(issues.map((i) => [i.field, i.rule])).toEqual(expect.arrayContaining([['cron', 'cron'], ['shardingTotalCount', 'type'], ['shardingCount', 'unknown-field']]));
    expect(issues.find((i) => i.field === 'shardingCount')?.message).toContain('shardingTotalCount');
    expect(await stored('broken-one')).toBeUndefined();
    for (const name of ['../etc', 'a/b', '..', '']) {
      const r = await c.as('ann', { method: 'POST', url: url(), payload: shell(name) });
      expect(r.statusCode, name).toBe(400);
      expect(r.json().error.details.issues[0]).toMatchObject({ field: 'name', rule: 'pattern' });
    }
    const downstream = await c.as('ann', { method: 'POST', url: url(), payload: shell('lonely', { downstream: ['nobody'] }) });
    expect(downstream.statusCode).toBe(400);
    expect(downstream.json().error.details.issues).toEqual([expect.objectContaining({ field: 'downstream[0]', rule: 'unknown-job' })]);
    const malformed = await c.as('ann', { method: 'POST', url: url(), payload: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.details.issues[0]).toMatchObject({ field: 'body', rule: 'json' });
    const notObject = await c.as('ann', { method: 'POST', url: url(), payload: '[1,2]', headers: { 'content-type': 'application/json' } });
    expect(notObject.statusCode).toBe(400);
    const huge = await c.as('ann', { method: 'POST', url: url(), payload: shell('huge', { command: 'x'.repeat(600 * 1024) }) });
    expect(huge.statusCode).toBe(413);
    expect(await stored('huge')).toBeUndefined();
    expect(await stored('lonely')).toBeUndefined();
  });

  it('answers 403 to a viewer or an operator, 401 without credentials, 404 for an unknown namespace', async () => {
    expect((await c.as('vic', { method: 'POST', url: url(), payload: shell('x') })).statusCode).toBe(403);
    const operator = await c.as('oli', { method: 'POST', url: url(), payload: shell('x') });
    expect(operator.statusCode).toBe(403);
    expect(operator.json().error).toMatchObject({ code: 'forbidden', details: { need: 'owner', namespace: 'shop' } });
    expect((await c.as(undefined, { method: 'GET', url: url() })).statusCode).toBe(401);
    const missing = await c.as('root', { method: 'POST', url: '/api/v1/namespaces/nowhere/jobs', payload: shell('x') });
    expect(missing.statusCode).toBe(404);
    expect(await stored('x')).toBeUndefined();
  });
});

describe('get and update', () => {
  it('gets a job with its version; 404 for an unknown one; 400 for a bad name', async () => {
    await cached('report', 0);
    const got = await c.as('vic', { method: 'GET', url: url('/report') });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({ name: 'report', version: 0, config: { cron: '0 3 * * *' }, assignment: null, summary: { running: 0, failing: 0 } });
    expect((await c.as('vic', { method: 'GET', url: url('/nobody') })).statusCode).toBe(404);
    const badName = await c.as('vic', { method: 'GET', url: url('/a..b') });
    expect(badName.statusCode).toBe(400);
    expect(badName.json().error.details.issues[0]).toMatchObject({ field: 'job', rule: 'pattern' });
  });

  it('updates with compare-and-set: the current version writes; a stale one is a 409 with the current version and config, and nothing is written', async () => {
    const updated = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: 0, config: shell('report', { cron: '0 4 * * *' }) } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ version: 1, changed: true, config: { cron: '0 4 * * *', groups: [] } });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.update', job: 'report', before: { cron: '0 3 * * *' }, after: { cron: '0 4 * * *' } });
    const stale = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: 0, config: shell('report', { cron: '0 5 * * *' }) } });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toMatchObject({ code: 'conflict', details: { version: 1, config: { name: 'report', cron: '0 4 * * *' } } });
    expect(await stored('report')).toMatchObject({ version: 1, config: { cron: '0 4 * * *' } });
    // The name may be left out (it is the path's); a different one is refused.
    const same = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: 1, config: { type: 'shell', command: 'echo hi', cron: '0 4 * * *' } } });
    expect(same.json()).toMatchObject({ version: 1, changed: false });
    const renamed = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: 1, config: shell('other') } });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json().error.details.issues).toEqual([expect.objectContaining({ field: 'config.name', rule: 'match' })]);
  });

  it('answers 400 for an invalid config (fields named under config.) or envelope, and 403 for a viewer or operator; nothing written', async () => {
    const invalid = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: 1, config: shell('report', { cron: 'every day', timeZone: 'Mars/Olympus' }) } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.details.issues.map((i: { field: string; rule: string }) => [i.field, i.rule])).toEqual(expect.arrayContaining([['config.cron', 'cron'], ['config.timeZone', 'time-zone']]));
    const envelope = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { version: '1', config: shell('report'), extra: true } });
    expect(envelope.statusCode).toBe(400);
    expect(envelope.json().error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['extra']));
    const noVersion = await c.as('ann', { method: 'PUT', url: url('/report'), payload: { config: shell('report') } });
    expect(noVersion.json().error.details.issues).toEqual([expect.objectContaining({ field: 'version', rule: 'required' })]);
    expect((await c.as('vic', { method: 'PUT', url: url('/report'), payload: { version: 1, config: shell('report') } })).statusCode).toBe(403);
    expect((await c.as('oli', { method: 'PUT', url: url('/report'), payload: { version: 1, config: shell('report') } })).statusCode).toBe(403);
    expect((await c.as('ann', { method: 'PUT', url: url('/nobody'), payload: { version: 0, config: shell('nobody') } })).statusCode).toBe(404);
    expect(await stored('report')).toMatchObject({ version: 1, config: { cron: '0 4 * * *' } });
    expect(await stored('nobody')).toBeUndefined();
  });
});

describe('enable, disable, run, stop', () => {
  it('enables and disables (operator), each change audited; a viewer gets 403', async () => {
    expect((await c.as('vic', { method: 'POST', url: url('/report/enable') })).statusCode).toBe(403);
    const enabled = await c.as('oli', { method: 'POST', url: url('/report/enable') });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json()).toEqual({ name: 'report', enabled: true, changed: true });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.enable', job: 'report' });
    expect((await c.as('oli', { method: 'POST', url: url('/report/enable') })).json()).toMatchObject({ changed: false });
    expect((await stored('report'))?.config.enabled).toBe(true);
    expect((await c.as('oli', { method: 'POST', url: url('/nobody/enable') })).statusCode).toBe(404);
  });

  it('runs and stops through the command nodes the executors read; refuses with 409 when no executor is online, 400 for bad items', async () => {
    const none = await c.as('oli', { method: 'POST', url: url('/report/run') });
    expect(none.statusCode).toBe(409);
    expect(none.json().error.message).toContain('no online executor');
    // An online executor that the assignment names.
    await c.zk.mkdirp(paths.executor('shop', 'ex1'));
    await c.zk.create(paths.executorPresence('shop', 'ex1'), encodeJson({ host: 'h', pid: 1, version: '0', startedAt: 1, handlers: [], tags: [] }), 'ephemeral');
    await c.zk.create(paths.jobAssignment('shop', 'report'), encodeJson({ epoch: 1, allocatorEpoch: 1, items: { ex1: [0] }, unassigned: [], writtenAt: 1 }));
    const run = await c.as('oli', { method: 'POST', url: url('/report/run'), payload: { items: [0], param: 'p' } });
    expect(run.statusCode, run.body).toBe(202);
    expect(run.json()).toEqual({ name: 'report', executors: ['ex1'] });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.run', job: 'report', details: { items: [0], param: 'p' } });
    const badItems = await c.as('oli', { method: 'POST', url: url('/report/run'), payload: { items: [5] } });
    expect(badItems.statusCode).toBe(400);
    expect(badItems.json().error.details.issues[0]).toMatchObject({ field: 'items', rule: 'item-range' });
    const wrongType = await c.as('oli', { method: 'POST', url: url('/report/run'), payload: { items: 'all', colour: 1 } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['items.0', 'colour'])); // ajv reads 'all' as ['all']
    const stop = await c.as('oli', { method: 'POST', url: url('/report/stop') });
    expect(stop.statusCode, stop.body).toBe(202);
    const commands = await c.zk.getChildren(paths.jobCommands('shop', 'report'));
    expect(commands).toHaveLength(2);
    const kinds = await Promise.all(commands.sort().map(async (n) => JSON.parse((await c.zk.get(paths.jobCommand('shop', 'report', n))).data!.toString()).kind));
    expect(kinds).toEqual(['run', 'stop']);
    expect((await c.as('vic', { method: 'POST', url: url('/report/stop') })).statusCode).toBe(403);
  });
});

describe('copy and delete', () => {
  it('copies a job disabled (owner); an existing target is a 409, a broken source a 409', async () => {
    const copied = await c.as('ann', { method: 'POST', url: url('/report/copy'), payload: { name: 'report-copy' } });
    expect(copied.statusCode, copied.body).toBe(201);
    expect(copied.json()).toMatchObject({ name: 'report-copy', version: 0, config: { name: 'report-copy', enabled: false, cron: '0 4 * * *' } });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.copy', job: 'report-copy', details: { from: 'report' } });
    expect((await c.as('ann', { method: 'POST', url: url('/report/copy'), payload: { name: 'report-copy' } })).statusCode).toBe(409);
    expect((await c.as('ann', { method: 'POST', url: url('/report/copy'), payload: { name: '../x' } })).statusCode).toBe(400);
    expect((await c.as('oli', { method: 'POST', url: url('/report/copy'), payload: { name: 'y' } })).statusCode).toBe(403);
    await c.zk.create(paths.job('shop', 'rotten'), Buffer.from('{not json'));
    const rotten = await c.as('ann', { method: 'POST', url: url('/rotten/copy'), payload: { name: 'fresh' } });
    expect(rotten.statusCode).toBe(409);
    expect(await stored('fresh')).toBeUndefined();
  });

  it('refuses to delete an enabled job unless force=true, deletes a disabled or broken one (owner)', async () => {
    const refused = await c.as('ann', { method: 'DELETE', url: url('/report') });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toContain('disable it first');
    expect(await stored('report')).toBeDefined();
    expect((await c.as('oli', { method: 'DELETE', url: url('/report-copy') })).statusCode).toBe(403);
    expect((await c.as('ann', { method: 'DELETE', url: url('/report-copy') })).statusCode).toBe(204);
    expect(await stored('report-copy')).toBeUndefined();
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.delete', job: 'report-copy', before: { name: 'report-copy' } });
    expect((await c.as('ann', { method: 'DELETE', url: url('/rotten') })).statusCode).toBe(204);
    expect((await c.as('ann', { method: 'DELETE', url: url('/report?force=yes') })).statusCode).toBe(400);
    expect((await c.as('ann', { method: 'DELETE', url: url('/report?force=true') })).statusCode).toBe(204);
    expect(await stored('report')).toBeUndefined();
    expect((await c.as('ann', { method: 'DELETE', url: url('/report') })).statusCode).toBe(404);
  });
});

describe('list', () => {
  it('filters by name, group and state, pages by offset and cursor, sorted by name, with next fire times and broken jobs', async () => {
    for (let i = 0; i < 7; i += 1) {
      const r = await c.as('ann', { method: 'POST', url: url(), payload: shell(`list-${i}`, { cron: '*/5 * * * *', enabled: i % 2 === 0, groups: i < 3 ? ['low'] : ['high'] }) });
      expect(r.statusCode).toBe(201);
    }
    await c.zk.create(paths.job('shop', 'list-rotten'), Buffer.from('{"name": 1}'));
    await eventually(async () => expect((await c.as('vic', { method: 'GET', url: url('?name=LIST') })).json().total).toBe(8));
    const before = Date.now();
    const all = (await c.as('vic', { method: 'GET', url: url('?name=list&limit=3') })).json();
    expect(all).toMatchObject({ total: 8, limit: 3, offset: 0, cursor: null, nextCursor: 'list-2', filter: { name: 'list', group: null, state: null } });
    expect(all.items.map((i: { name: string }) => i.name)).toEqual(['list-0', 'list-1', 'list-2']);
    expect(all.items[0]).toMatchObject({ broken: false, type: 'shell', cron: '*/5 * * * *', timeZone: 'UTC', enabled: true, groups: ['low'], shardCount: 1, summary: { running: 0 }, lastOutcomes: [] });
    expect(all.items[0].nextFireTime).toBeGreaterThan(before);
    expect(all.items[0].nextFireTime % 300_000).toBe(0);
    expect(all.items[1].nextFireTime).toBeNull(); // disabled
    // An overlapping page takes its first two items as rendered for the page above: still one
    // compact JSON document, the items as the serializer wrote them.
    const overlap = await c.as('vic', { method: 'GET', url: url('?name=list&limit=3&offset=1') });
    expect(overlap.body).toBe(JSON.stringify(JSON.parse(overlap.body)));
    expect(overlap.json().items).toEqual([...all.items.slice(1), expect.objectContaining({ name: 'list-3' })]);
    const next = (await c.as('vic', { method: 'GET', url: url(`?name=list&limit=3&cursor=${all.nextCursor}`) })).json();
    expect(next.items.map((i: { name: string }) => i.name)).toEqual(['list-3', 'list-4', 'list-5']);
    const last = (await c.as('vic', { method: 'GET', url: url('?name=list&limit=3&offset=6') })).json();
    expect(last.items.map((i: { name: string }) => i.name)).toEqual(['list-6', 'list-rotten']);
    expect(last.nextCursor).toBeNull();
    expect(last.items[1]).toMatchObject({ name: 'list-rotten', broken: true, problem: expect.stringContaining('name') });
    const names = async (query: string) => (await c.as('vic', { method: 'GET', url: url(`?name=list-&${query}`) })).json().items.map((i: { name: string }) => i.name);
    expect(await names('group=high&state=enabled')).toEqual(['list-4', 'list-6']);
    expect(await names('state=disabled')).toEqual(['list-1', 'list-3', 'list-5']);
    expect(await names('state=broken')).toEqual(['list-rotten']);
    expect(await names('state=running')).toEqual([]);
    // A failing item: its last outcome failed.
    await c.zk.mkdirp(paths.jobShards('shop', 'list-0'));
    await c.zk.create(paths.jobShard('shop', 'list-0', 0), encodeJson({ state: 'idle', last: { status: 'failed', exitCode: 1, startedAt: 1, endedAt: 2, durationMs: 1, executor: 'ex1', runId: 'r1', fireTime: 1, attempt: 1, fencingToken: 1, message: 'boom' } }));
    await eventually(async () => expect(await names('state=failing')).toEqual(['list-0']));
    const failing = (await c.as('vic', { method: 'GET', url: url('?name=list-0') })).json().items[0];
    expect(failing).toMatchObject({ summary: { failing: 1 }, lastOutcomes: [{ item: 0, status: 'failed', message: 'boom', executor: 'ex1' }] });
    for (const query of ['limit=501', 'limit=0', 'offset=-1', 'state=sleepy', 'colour=blue', 'cursor=../x', 'limit=1e3']) {
      const bad = await c.as('vic', { method: 'GET', url: url(`?${query}`) });
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json().error.details.issues.length, query).toBeGreaterThan(0);
    }
    expect((await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/nowhere/jobs' })).statusCode).toBe(403);
    expect((await c.as('root', { method: 'GET', url: '/api/v1/namespaces/nowhere/jobs' })).statusCode).toBe(404);
  });
});

describe('batch', () => {
  it('validates all or nothing: every problem listed, nothing written', async () => {
    const versions = await Promise.all(['list-1', 'list-3'].map(async (n) => (await stored(n))?.version));
    const bad = await c.as('oli', { method: 'POST', url: url(':batch'), payload: { action: 'run', names: ['list-1', 'nobody', 'list-3', 'list-rotten'] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('nothing was done');
    expect(bad.json().error.details.issues.map((i: { field: string; rule: string }) => [i.field, i.rule])).toEqual([['names[0]', 'enabled'], ['names[1]', 'exists'], ['names[2]', 'enabled'], ['names[3]', 'readable']]);
    const enable = await c.as('oli', { method: 'POST', url: url('/batch'), payload: { action: 'enable', names: ['list-1', 'nobody'] } });
    expect(enable.statusCode).toBe(400);
    expect(await Promise.all(['list-1', 'list-3'].map(async (n) => (await stored(n))?.version))).toEqual(versions);
    const dupes = await c.as('oli', { method: 'POST', url: url('/batch'), payload: { action: 'explode', names: ['a', 'a', '../b'] } });
    expect(dupes.statusCode).toBe(400);
    expect(dupes.json().error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['action', 'names', 'names.2']));
  });

  it('enables several jobs (operator) with one write each, answering each outcome; a batch delete needs owner', async () => {
    const enable = await c.as('oli', { method: 'POST', url: url(':batch'), payload: { action: 'enable', names: ['list-1', 'list-2', 'list-3'] } });
    expect(enable.statusCode, enable.body).toBe(200);
    expect(enable.json()).toEqual({ action: 'enable', results: [{ name: 'list-1', outcome: 'done' }, { name: 'list-2', outcome: 'unchanged' }, { name: 'list-3', outcome: 'done' }] });
    expect((await stored('list-1'))?.config.enabled).toBe(true);
    expect(c.audited.filter((a) => a.action === 'job.enable' && a.details?.batch === true).map((a) => a.job)).toEqual(['list-1', 'list-3']);
    expect((await c.as('vic', { method: 'POST', url: url(':batch'), payload: { action: 'enable', names: ['list-1'] } })).statusCode).toBe(403);
    const operatorDelete = await c.as('oli', { method: 'POST', url: url(':batch'), payload: { action: 'delete', names: ['list-5'] } });
    expect(operatorDelete.statusCode).toBe(403);
    expect(operatorDelete.json().error.details).toMatchObject({ need: 'owner' });
    const enabledDelete = await c.as('ann', { method: 'POST', url: url(':batch'), payload: { action: 'delete', names: ['list-5', 'list-1'] } });
    expect(enabledDelete.statusCode).toBe(400);
    expect(enabledDelete.json().error.details.issues).toEqual([expect.objectContaining({ field: 'names[1]', rule: 'disabled' })]);
    expect(await stored('list-5')).toBeDefined();
    const deleted = await c.as('ann', { method: 'POST', url: url(':batch'), payload: { action: 'delete', names: ['list-5', 'list-rotten'] } });
    expect(deleted.json().results.map((r: { outcome: string }) => r.outcome)).toEqual(['done', 'done']);
    expect(await stored('list-5')).toBeUndefined();
    expect(await stored('list-rotten')).toBeUndefined();
  });
});

describe('two consoles', () => {
  it('a write through one console is visible through the other console within 1 s', async () => {
    const other = await startTestConsole(zkConnect, 'job-routes-2', { root: c.root });
    try {
      await eventually(() => expect(other.cache.job('shop', 'list-0')).toBeDefined());
      const created = await c.as('ann', { method: 'POST', url: url(), payload: shell('seen-elsewhere', { cron: '0 1 * * *' }) });
      expect(created.statusCode).toBe(201);
      await eventually(async () => expect((await other.as('vic', { method: 'GET', url: url('/seen-elsewhere') })).json()).toMatchObject({ version: 0, config: { cron: '0 1 * * *' } }), { timeoutMs: 1000, intervalMs: 10 });
      const updated = await other.as('ann', { method: 'PUT', url: url('/seen-elsewhere'), payload: { version: 0, config: shell('seen-elsewhere', { cron: '0 2 * * *' }) } });
      expect(updated.statusCode).toBe(200);
      await eventually(async () => expect((await c.as('vic', { method: 'GET', url: url('/seen-elsewhere') })).json()).toMatchObject({ version: 1, config: { cron: '0 2 * * *' } }), { timeoutMs: 1000, intervalMs: 10 });
    } finally {
      await other.close();
    }
  });
});
