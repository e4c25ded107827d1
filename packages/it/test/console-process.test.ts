// orrery-console as real processes on a real ZooKeeper: two consoles starting at the same time
// create exactly one first admin (its generated password printed once, by one of them, never in a
// log line); a login on one console is good on the other (one session secret in ZooKeeper); a token
// created on one works on the other, and revoking it takes effect there within a second; SIGTERM
// stops a console cleanly.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createZkClient, encodeJson, parseJobConfig, paths } from '@orrery/core';
import { eventually, fourLetterWord, uniqueRoot } from '@orrery/core/testing';
import { startProcess, stopAllProcesses, type RunningProcess } from '../src/index.js';
import { normalSession, parseWchc } from '../bench/scale/zk-cost.js';

const zkConnect = inject('zkConnect');
const PASSWORD_LINE = /created the first admin 'admin' with the password (\S+)/;

afterEach(async () => {
  await stopAllProcesses();
});

async function startConsole(root: string, env: Record<string, string> = {}): Promise<RunningProcess> {
  return startProcess('orrery-console', ['--zk', zkConnect, '--root', root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: '', ...env });
}

async function urlOf(p: RunningProcess): Promise<string> {
  const line = await p.waitForLine(/"msg":"console started"/, 60_000);
  return (JSON.parse(line) as { url: string }).url;
}

async function api(url: string, path: string, init: { method?: string; body?: unknown; cookie?: string; token?: string } = {}): Promise<{ status: number; json: any; setCookie: string | null }> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.cookie) headers.cookie = init.cookie;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const response = await fetch(`${url}/api/v1${path}`, { method: init.method ?? 'GET', headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, setCookie: response.headers.get('set-cookie') };
}

describe('orrery-console', () => {
  it('watches what others write (a job\'s children, assignment, applied, shards) through its watch sessions, a job\'s all through one, and the job configs through its main session', async () => {
    const root = uniqueRoot('console-watch-sessions');
    const zk = createZkClient({ connect: zkConnect, root });
    await zk.start();
    const jobs = Array.from({ length: 12 }, (_, i) => `job-${i}`);
    try {
      await zk.mkdirp(paths.jobs('ns'));
      await zk.set(paths.namespace('ns'), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
      for (const job of jobs) {
        await zk.create(paths.job('ns', job), encodeJson(parseJobConfig({ name: job, type: 'shell', command: 'true', cron: '0 0 1 1 *', shardingTotalCount: 2 })));
        await zk.create(paths.jobAssignment('ns', job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: {}, unassigned: [0, 1] }));
        await zk.create(paths.jobApplied('ns', job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: {} }));
        await zk.create(paths.jobShards('ns', job));
        for (const item of [0, 1]) await zk.create(paths.jobShard('ns', job, item), encodeJson({ state: 'idle' }));
      }
      const consoleProcess = await startConsole(root);
      await urlOf(consoleProcess);
      const sessions = consoleProcess.lines.filter((l) => l.includes('"msg":"zookeeper connection state"')).map((l) => JSON.parse(l) as { sessionId: string; watchSession?: number });
      const main = normalSession(sessions.find((s) => s.watchSession === undefined)!.sessionId);
      const watchSessions = new Set(sessions.filter((s) => s.watchSession !== undefined).map((s) => normalSession(s.sessionId)));
      expect(watchSessions.size).toBe(8);
      const [, port] = zkConnect.split(':');
      await eventually(async () => {
        const held = parseWchc(await fourLetterWord(Number(port), 'wchc', 10_000));
        const holders = (path: string): string[] => [...held].filter(([, list]) => list.includes(`${root}${path}`)).map(([session]) => session);
        const used = new Set<string>();
        for (const job of jobs) {
          // `wchc` lists data watches: the job node's (its config: the console writes it, and a
          // write's answer must follow its watch event) on the main session; the job's assignment,
          // applied, shard folder and shards on one watch session.
          expect(holders(paths.job('ns', job))).toEqual([main]);
          const others = [paths.jobAssignment('ns', job), paths.jobApplied('ns', job), paths.jobShards('ns', job), paths.jobShard('ns', job, 0), paths.jobShard('ns', job, 1)].map(holders);
          for (const h of others) expect(h).toEqual(others[0]);
          expect(others[0]).toHaveLength(1);
          expect(watchSessions.has(others[0]![0]!)).toBe(true);
          used.add(others[0]![0]!);
        }
        // Twelve jobs are spread: more than one watch session holds some.
        expect(used.size).toBeGreaterThan(1);
      }, { timeoutMs: 20_000 });
    } finally {
      await zk.close();
    }
  });

  it('two consoles starting together: one first admin, sessions and tokens good on both, revocation within 1 s', async () => {
    const root = uniqueRoot('console-process');
    const [a, b] = await Promise.all([startConsole(root), startConsole(root)]);
    const [urlA, urlB] = await Promise.all([urlOf(a), urlOf(b)]);

    // Exactly one console created the admin and printed its password, as a plain line (not the log).
    const printed = [...a.lines, ...b.lines].filter((l) => PASSWORD_LINE.test(l));
    expect(printed).toHaveLength(1);
    const password = PASSWORD_LINE.exec(printed[0]!)![1]!;
    const mentions = [...a.lines, ...b.lines].filter((l) => l.includes(password));
    expect(mentions).toEqual(printed);
    expect(() => JSON.parse(printed[0]!)).toThrow();
    expect([...a.lines, ...b.lines].filter((l) => l.includes('"msg":"first admin created"'))).toHaveLength(1);

    // A login on A; its cookie is good on B.
    expect((await api(urlA, '/auth/login', { method: 'POST', body: { user: 'admin', password: 'wrong-password' } })).status).toBe(401);
    const login = await api(urlA, '/auth/login', { method: 'POST', body: { user: 'admin', password } });
    expect(login.status).toBe(200);
    expect(login.setCookie).toMatch(/^orrery_session=v1\.[^;]+;.*HttpOnly/i);
    expect(login.setCookie).toMatch(/SameSite=Strict/i);
    const cookie = login.setCookie!.split(';')[0]!;
    const me = await api(urlB, '/auth/me', { cookie });
    expect(me).toMatchObject({ status: 200, json: { user: 'admin', admin: true, via: 'session' } });

    // A token made on A works on B; revoked on A, B refuses it within a second.
    const created = await api(urlA, '/tokens', { method: 'POST', cookie, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const { token, id } = created.json as { token: string; id: string };
    await eventually(async () => expect((await api(urlB, '/auth/me', { token })).status).toBe(200), { timeoutMs: 10_000 });
    expect((await api(urlA, `/tokens/${id}`, { method: 'DELETE', cookie })).status).toBe(204);
    await eventually(async () => expect((await api(urlB, '/auth/me', { token })).status).toBe(401), { timeoutMs: 1000, intervalMs: 20, message: 'the revoked token refused by the other console' });

    // Both record to one audit log (a failed login is logged, not audited); neither the password nor the token is in it or in any log line.
    await eventually(async () => {
      const audit = await api(urlB, '/audit?limit=1000', { cookie });
      expect(audit.json.entries.map((e: { action: string }) => e.action)).toEqual(['token.revoke', 'token.create', 'auth.login']);
    });
    for (const line of [...a.lines, ...b.lines]) expect(line).not.toContain(token.slice(21));

    // SIGTERM: a clean stop.
    await a.stop(10_000);
    expect(await a.exited).toBe(0);
    expect(a.lines.some((l) => l.includes('"msg":"stopping"'))).toBe(true);
  });

  it('takes the first admin from ORRERY_ADMIN_PASSWORD and refuses a short one', async () => {
    const root = uniqueRoot('console-process-env');
    const short = startProcess('orrery-console', ['--zk', zkConnect, '--root', root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: 'short' });
    expect(await short.exited).toBe(2);
    expect(short.lines.join('\n')).toMatch(/ORRERY_ADMIN_PASSWORD: must be at least 8 characters/);
    const c = await startConsole(root, { ORRERY_ADMIN_PASSWORD: 'from-the-environment' });
    const url = await urlOf(c);
    expect(c.lines.some((l) => PASSWORD_LINE.test(l))).toBe(false);
    expect(c.lines.some((l) => l.includes('from-the-environment'))).toBe(false);
    expect((await api(url, '/auth/login', { method: 'POST', body: { user: 'admin', password: 'from-the-environment' } })).status).toBe(200);
  });

  it('runs with a bounded heap (ORRERY_CONSOLE_HEAP_MB, default 256), one process under the spawned pid, and refuses a bad bound', async () => {
    const root = uniqueRoot('console-process-heap');
    const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const byDefault = await startConsole(root, { ORRERY_ADMIN_PASSWORD: 'from-the-environment' });
    await urlOf(byDefault);
    expect(cmdline(byDefault.pid)).toEqual(expect.arrayContaining(['--max-old-space-size=256', '--max-semi-space-size=4']));
    expect(readFileSync(`/proc/${byDefault.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    const loaded = JSON.parse(byDefault.lines.find((l) => l.includes('"msg":"cache loaded"'))!) as { heapLimitMb: number; level: unknown };
    expect(loaded.heapLimitMb).toBeGreaterThan(256);
    expect(loaded.heapLimitMb).toBeLessThan(400);
    await byDefault.stop(10_000);

    const raised = await startConsole(root, { ORRERY_CONSOLE_HEAP_MB: '1024' });
    await urlOf(raised);
    expect(cmdline(raised.pid)).toContain('--max-old-space-size=1024');
    await raised.stop(10_000);

    for (const bad of ['lots', '32', '-1']) {
      const refused = await startConsole(root, { ORRERY_CONSOLE_HEAP_MB: bad });
      expect(await refused.exited).toBe(2);
      expect(refused.lines.join('\n')).toMatch(/ORRERY_CONSOLE_HEAP_MB must be/);
    }
  });
});
