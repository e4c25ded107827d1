// Config history through the console and the CLI against a real ZooKeeper: every writer records the
// version it wrote with its author (a console user; `cli:<user>@<host>` for `orrery apply` and
// `orrery enable`), the history routes list and read versions, diff two of them field by field, and
// roll back as an ordinary compare-and-set update, audited.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { paths } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { main } from '../../cli/main.js';
import { createNamespace } from '../../store/namespaces.js';
import { startTestConsole, type TestConsole } from './job-test-support.js';

const zkConnect = inject('zkConnect');
let c: TestConsole;
const dir = mkdtempSync(join(tmpdir(), 'orrery-history-'));
const url = (path: string) => `/api/v1/namespaces/shop/jobs${path}`;
const CLI_AUTHOR = `cli:tess@${hostname()}`;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['--zk', zkConnect, '--root', c.root, '-n', 'shop', ...args], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: { USER: 'tess' },
  });
  return { code, stdout, stderr };
}

async function history(job: string): Promise<Array<{ version: number; author: string; at: number }>> {
  const r = await c.as('vic', { method: 'GET', url: url(`/${job}/history`) });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().versions;
}

beforeAll(async () => {
  c = await startTestConsole(zkConnect, 'job-history-routes');
  await createNamespace(c.zk, 'shop');
  await eventually(() => expect(c.cache.namespace('shop')).toBeDefined());
});
afterAll(async () => {
  await c.close();
});

describe('config history', () => {
  it('records the versions written by the CLI (apply, enable) and by the console (create, update, enable), each with its author', async () => {
    const file = join(dir, 'jobs.yaml');
    writeFileSync(file, 'jobs:\n  - name: backup\n    type: shell\n    command: tar czf /tmp/b.tgz /srv\n    cron: "0 1 * * *"\n');
    expect((await cli('apply', '-f', file)).code).toBe(0);
    expect((await cli('enable', 'backup')).code).toBe(0);
    await eventually(() => expect(c.cache.job('shop', 'backup')?.config.stat.version).toBe(1));
    const updated = await c.as('ann', { method: 'PUT', url: url('/backup'), payload: { version: 1, config: { name: 'backup', type: 'shell', command: 'tar czf /tmp/b.tgz /srv', cron: '0 2 * * *', enabled: true } } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect((await c.as('oli', { method: 'POST', url: url('/backup/disable') })).statusCode).toBe(200);
    writeFileSync(file, 'jobs:\n  - name: backup\n    type: shell\n    command: tar czf /tmp/b.tgz /srv /etc\n    cron: "0 2 * * *"\n');
    expect((await cli('apply', '-f', file)).code).toBe(0);

    const versions = await history('backup');
    expect(versions.map((v) => [v.version, v.author])).toEqual([[4, CLI_AUTHOR], [3, 'oli'], [2, 'ann'], [1, CLI_AUTHOR], [0, CLI_AUTHOR]]);
    expect(versions.every((v) => v.at > 0)).toBe(true);
    // Read on demand: the history is not in the cache.
    expect(c.cache.consoleChildren(paths.consoleHistory())).toEqual([]);

    const created = await c.as('ann', { method: 'POST', url: url(''), payload: { name: 'mail', type: 'shell', command: 'true' } });
    expect(created.statusCode).toBe(201);
    expect((await history('mail')).map((v) => [v.version, v.author])).toEqual([[0, 'ann']]);
  });

  it('reads one version, diffs two field by field (to: default the current one); 404 for a version not kept, 400 for a bad one', async () => {
    const one = await c.as('vic', { method: 'GET', url: url('/backup/history/1') });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ version: 1, author: CLI_AUTHOR, config: { name: 'backup', cron: '0 1 * * *', enabled: true } });
    const diff = await c.as('vic', { method: 'GET', url: url('/backup/diff?from=1&to=2') });
    expect(diff.statusCode).toBe(200);
    expect(diff.json()).toEqual({ job: 'backup', from: 1, to: 2, changes: [{ field: 'cron', before: '0 1 * * *', after: '0 2 * * *' }] });
    await eventually(() => expect(c.cache.job('shop', 'backup')?.config.stat.version).toBe(4));
    const toCurrent = await c.as('vic', { method: 'GET', url: url('/backup/diff?from=0') });
    expect(toCurrent.json()).toMatchObject({ from: 0, to: 4 });
    expect(toCurrent.json().changes.map((ch: { field: string }) => ch.field).sort()).toEqual(['command', 'cron']);
    expect((await c.as('vic', { method: 'GET', url: url('/backup/history/99') })).statusCode).toBe(404);
    expect((await c.as('vic', { method: 'GET', url: url('/backup/diff?from=99') })).statusCode).toBe(404);
    for (const bad of ['/backup/history/-1', '/backup/history/x', '/backup/diff', '/backup/diff?from=1&to=2&x=3', '/backup/diff?from=0x1']) {
      const r = await c.as('vic', { method: 'GET', url: url(bad) });
      expect(r.statusCode, bad).toBe(400);
    }
    expect((await c.as('vic', { method: 'GET', url: url('/nobody/history') })).statusCode).toBe(404);
    expect((await c.as(undefined, { method: 'GET', url: url('/backup/history') })).statusCode).toBe(401);
  });

  it('rolls back as a compare-and-set update (owner), audited as job.rollback; a stale currentVersion is a 409 and writes nothing', async () => {
    const stale = await c.as('ann', { method: 'POST', url: url('/backup/rollback'), payload: { version: 1, currentVersion: 2 } });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toMatchObject({ code: 'conflict', details: { version: 4, config: { cron: '0 2 * * *' } } });
    expect((await c.as('oli', { method: 'POST', url: url('/backup/rollback'), payload: { version: 1, currentVersion: 4 } })).statusCode).toBe(403);
    expect((await c.as('ann', { method: 'POST', url: url('/backup/rollback'), payload: { version: 77, currentVersion: 4 } })).statusCode).toBe(404);
    expect((await c.as('ann', { method: 'POST', url: url('/backup/rollback'), payload: { version: 1 } })).statusCode).toBe(400);
    expect((await c.zk.get(paths.job('shop', 'backup'))).stat.version).toBe(4);

    const rolled = await c.as('ann', { method: 'POST', url: url('/backup/rollback'), payload: { version: 1, currentVersion: 4 } });
    expect(rolled.statusCode, rolled.body).toBe(200);
    expect(rolled.json()).toMatchObject({ name: 'backup', version: 5, rolledBackTo: 1, changed: true, config: { cron: '0 1 * * *', command: 'tar czf /tmp/b.tgz /srv', enabled: true } });
    expect(c.audited.at(-1)).toMatchObject({ action: 'job.rollback', job: 'backup', before: { cron: '0 2 * * *' }, after: { cron: '0 1 * * *' }, details: { toVersion: 1, version: 5 } });
    const stored = JSON.parse((await c.zk.get(paths.job('shop', 'backup'))).data!.toString());
    expect(stored).toMatchObject({ cron: '0 1 * * *', enabled: true });
    expect((await history('backup'))[0]).toMatchObject({ version: 5, author: 'ann' });
    const same = await c.as('vic', { method: 'GET', url: url('/backup/diff?from=1&to=5') });
    expect(same.json().changes).toEqual([]);
  });

  it('deletes the history with its job (CLI delete); a job created again under the name starts a new history', async () => {
    expect((await cli('delete', 'backup', '--force')).code).toBe(0);
    expect(await c.zk.exists(paths.jobHistory('shop', 'backup'))).toBeNull();
    const again = await c.as('ann', { method: 'POST', url: url(''), payload: { name: 'backup', type: 'shell', command: 'true' } });
    expect(again.statusCode).toBe(201);
    expect((await history('backup')).map((v) => [v.version, v.author])).toEqual([[0, 'ann']]);
  });
});
