import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLazyFile } from './lazy-file.js';
import { createHistory, parseRunRecord, tallyRuns, type RunRecord, type TalliedRun } from './history.js';

/** A real pino logger whose lines the test reads. */
const capturingLogger = () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } });
  return { logger, lines };
};
const mode = (path: string): number => statSync(path).mode & 0o777;
/** Bytes of a run's files on disk. */
const runBytes = (jobDir: string, runId: string): number =>
  readdirSync(jobDir).filter((f) => f.startsWith(`${runId}.`)).reduce((sum, f) => sum + statSync(join(jobDir, f)).size, 0);

const record = (job: string, startedAt: number, extra: Partial<RunRecord> = {}): RunRecord => ({
  job, item: 0, trigger: 'cron', recorded: true, status: 'succeeded', exitCode: 0, startedAt, endedAt: startedAt + 5, durationMs: 5,
  executor: 'e', runId: `${startedAt.toString(36)}-0-abc${startedAt % 7}`, fireTime: startedAt, attempt: 1, fencingToken: 1, message: '', stdoutTail: '', stderrTail: '', ...extra,
});

describe('run history', () => {
  it('lists runs per job newest first, finds a run and its logs', async () => {
    const h = createHistory({ dataDir: mkdtempSync(join(tmpdir(), 'hist-')) });
    const t = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < 5; i += 1) await h.save(record('a', t + i * 1000));
    await h.save(record('b', t));
    const list = h.list('a');
    expect(list.map((r) => r.startedAt)).toEqual([4, 3, 2, 1, 0].map((i) => t + i * 1000));
    expect(h.list('a', 2)).toHaveLength(2);
    expect(h.get(list[0]!.runId)?.job).toBe('a');
    expect(h.get('nope-0-x')).toBeUndefined();
    expect(h.logPath(list[0]!.runId, 'stdout')).toMatch(/\.stdout\.log$/);
    expect(h.list('missing')).toEqual([]);
  });

  it('keeps runs by age and by total size, oldest out first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const day = 86_400_000;
    const now = Date.parse('2026-06-01T00:00:00Z');
    const h = createHistory({ dataDir: dir, maxAgeMs: 7 * day, maxBytes: 10_000 });
    await h.save(record('a', now - 10 * day));
    await h.save(record('a', now - 8 * day));
    const recent = [now - 3 * day, now - 2 * day, now - day].map((t) => record('a', t));
    for (const r of recent) {
      await h.save(r);
      writeFileSync(h.logPaths('a', r.runId).stdout, 'x'.repeat(4000));
    }
    // Two are too old; then 3 × ~4.5 KB > 10 KB: the oldest recent one goes too.
    expect(await h.prune(now)).toBe(3);
    expect(h.list('a').map((r) => r.runId)).toEqual([recent[2]!.runId, recent[1]!.runId]);
    expect(readdirSync(join(dir, 'runs', 'a')).filter((f) => f.startsWith(recent[0]!.runId))).toEqual([]);
  });

  it('prunes without holding the event loop: timers keep firing while thousands of runs are read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const now = Date.now();
    const h = createHistory({ dataDir: dir, maxAgeMs: 60_000 });
    const old = Array.from({ length: 3000 }, (_, i) => record(`j${i % 10}`, now - 120_000 - i));
    for (let i = 0; i < old.length; i += 200) await Promise.all(old.slice(i, i + 200).map((r) => h.save(r)));
    const kept = record('j0', now - 1000);
    await h.save(kept);
    let turns = 0;
    let pruned = false;
    const ticking = (async () => { while (!pruned) { await new Promise((r) => setImmediate(r)); turns += 1; } })();
    const again = h.prune(now); // joins the prune under way
    const removed = await h.prune(now);
    pruned = true;
    await ticking;
    expect(removed).toBe(3000);
    expect(await again).toBe(3000);
    expect(turns).toBeGreaterThan(100);
    expect(h.list('j0').map((r) => r.runId)).toEqual([kept.runId]);
  });
});

describe('run history: records cannot be corrupted, readers never throw', () => {
  it('writes each record through a temporary file renamed into place: none is left, none is listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const h = createHistory({ dataDir: dir });
    const t = Date.parse('2026-01-01T00:00:00Z');
    await Promise.all(Array.from({ length: 50 }, (_, i) => h.save(record('a', t + i))));
    const files = readdirSync(join(dir, 'runs', 'a'));
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files).toHaveLength(50);
    expect(h.list('a')).toHaveLength(50);
  });

  it('a save that cannot rename its record into place rejects, leaves no temporary file and counts nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const h = createHistory({ dataDir: dir });
    const t = Date.parse('2026-01-01T00:00:00Z');
    const r = record('a', t);
    // A folder where the record belongs: the rename of the written temporary file fails (EISDIR).
    mkdirSync(join(dir, 'runs', 'a', `${r.runId}.json`), { recursive: true });
    await expect(h.save(r)).rejects.toMatchObject({ code: 'EISDIR' });
    expect(readdirSync(join(dir, 'runs', 'a')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(h.usage()).toEqual({ runs: 0, bytes: 0 });
    await h.save(record('a', t + 1));
    expect(h.list('a').map((x) => x.runId)).toEqual([record('a', t + 1).runId]);
  });

  it('skips a truncated, empty, foreign or misplaced record, logs each once naming its file, and serves the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const { logger, lines } = capturingLogger();
    const h = createHistory({ dataDir: dir, logger });
    const t = Date.parse('2026-01-01T00:00:00Z');
    const good = record('a', t);
    await h.save(good);
    const jobDir = join(dir, 'runs', 'a');
    const bad = {
      truncated: record('a', t + 1),
      empty: record('a', t + 2),
      scalar: record('a', t + 3),
      otherRun: record('a', t + 4),
      otherJob: record('a', t + 5),
      folder: record('a', t + 6),
    };
    writeFileSync(join(jobDir, `${bad.truncated.runId}.json`), JSON.stringify(bad.truncated).slice(0, 40)); // a crash mid-write (old versions)
    writeFileSync(join(jobDir, `${bad.empty.runId}.json`), ''); // a power loss before the data reached the disk
    writeFileSync(join(jobDir, `${bad.scalar.runId}.json`), 'null');
    writeFileSync(join(jobDir, `${bad.otherRun.runId}.json`), JSON.stringify(good));
    writeFileSync(join(jobDir, `${bad.otherJob.runId}.json`), JSON.stringify({ ...bad.otherJob, job: 'b' }));
    mkdirSync(join(jobDir, `${bad.folder.runId}.json`));
    writeFileSync(join(jobDir, 'notes.txt'), 'not ours');
    writeFileSync(join(jobDir, '.hidden.json'), '{');
    writeFileSync(join(dir, 'runs', 'stray-file'), 'a file where a job folder would be');
    writeFileSync(join(jobDir, `.${good.runId}.json.1-1.tmp`), '{"half'); // a crash between write and rename
    for (let i = 0; i < 3; i += 1) {
      expect(h.list('a').map((r) => r.runId)).toEqual([good.runId]);
      for (const r of Object.values(bad)) expect(h.get(r.runId)).toBeUndefined();
      expect(h.get(good.runId)?.record).toEqual(good);
    }
    for (const r of Object.values(bad)) expect(() => h.logPath(r.runId, 'stdout')).not.toThrow();
    expect(h.list('stray-file')).toEqual([]);
    expect(h.list('../..')).toEqual([]);
    expect(h.get('../../etc/passwd')).toBeUndefined();
    const warned = lines.filter((l) => l.msg === 'skipping a run record that cannot be read');
    expect(warned.map((l) => l.file).sort()).toEqual(Object.values(bad).map((r) => join(jobDir, `${r.runId}.json`)).sort());
    expect(warned.every((l) => l.level === 40 && typeof l.problem === 'string')).toBe(true);
  });

  it.each([
    ['{"runId": "r-1", "job": "a", "startedAt": 1, "endedAt": 2, "status": "succeeded"}', undefined],
    ['{"runId": "r-1", "job": "a", "startedAt": 1, "endedAt": 2, "status": "succeeded"', 'not JSON (truncated?)'],
    ['', 'empty'],
    ['[]', 'not a JSON object'],
    ['{"runId": "r-2", "job": "a", "startedAt": 1, "endedAt": 2, "status": "succeeded"}', 'its runId is not its file name'],
    ['{"runId": "r-1", "job": "b", "startedAt": 1, "endedAt": 2, "status": "succeeded"}', 'its job is not its folder'],
    ['{"runId": "r-1", "job": "a", "startedAt": "1", "endedAt": 2, "status": "succeeded"}', 'startedAt, endedAt or status missing'],
  ])('parses %s as a record of run r-1 of a: problem %s', (text, problem) => {
    const parsed = parseRunRecord(text, 'a', 'r-1');
    expect('problem' in parsed ? parsed.problem : undefined).toBe(problem);
  });

  it('removes temporary files a crash left (not those of a save under way), never foreign files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const h = createHistory({ dataDir: dir });
    const now = Date.now();
    const r = record('a', now - 1000);
    await h.save(r);
    const jobDir = join(dir, 'runs', 'a');
    const stale = join(jobDir, `.${r.runId}.json.42-1.tmp`);
    const fresh = join(jobDir, `.${r.runId}.json.42-2.tmp`);
    writeFileSync(stale, '{');
    writeFileSync(fresh, '{');
    const old = new Date(now - 3_600_000);
    utimesSync(stale, old, old);
    writeFileSync(join(jobDir, 'notes.txt'), 'x');
    expect(await h.prune(now)).toBe(0);
    expect(readdirSync(jobDir).sort()).toEqual([fresh.slice(jobDir.length + 1), `${r.runId}.json`, 'notes.txt'].sort());
  });
});

describe('run history: private files', () => {
  it('makes runs/ and job folders 0700 (also when they existed as 0755), records and logs 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    mkdirSync(join(dir, 'runs', 'old'), { recursive: true, mode: 0o755 });
    chmodSync(join(dir, 'runs'), 0o755);
    chmodSync(join(dir, 'runs', 'old'), 0o755);
    const previous = process.umask(0o000); // the mode must not come from the umask
    try {
      const h = createHistory({ dataDir: dir });
      const r = record('old', Date.now());
      const logs = h.logPaths('old', r.runId);
      const out = createLazyFile(logs.stdout);
      out.write(Buffer.from('hello\n'));
      await out.end();
      await h.save(r);
      expect(mode(join(dir, 'runs'))).toBe(0o700);
      expect(mode(join(dir, 'runs', 'old'))).toBe(0o700);
      expect(mode(join(dir, 'runs', 'old', `${r.runId}.json`))).toBe(0o600);
      expect(mode(logs.stdout)).toBe(0o600);
      h.logPaths('new', r.runId);
      expect(mode(join(dir, 'runs', 'new'))).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});

describe('run history: the size bound holds at all times', () => {
  it('evicts the oldest kept runs as soon as a save takes the total over maxBytes, without a prune', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const maxBytes = 20_000;
    const h = createHistory({ dataDir: dir, maxBytes });
    const t = Date.now() - 60_000;
    const jobDir = join(dir, 'runs', 'a');
    const saved: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      // A run that wrote output has non-empty tails (a save looks for the logs of such runs only).
      const r = record('a', t + i * 10, { stdoutTail: 'ooo', stderrTail: 'eee' });
      // As a runner does: the logs are complete before the record is saved.
      writeFileSync(h.logPaths('a', r.runId).stdout, 'o'.repeat(2500));
      writeFileSync(h.logPaths('a', r.runId).stderr, 'e'.repeat(500));
      await h.save(r);
      saved.push(r.runId);
      const onDisk = readdirSync(jobDir).reduce((sum, f) => sum + statSync(join(jobDir, f)).size, 0);
      expect(onDisk).toBeLessThanOrEqual(maxBytes);
      expect(h.usage().bytes).toBe(onDisk);
    }
    // ~3.4 KB a run: the newest five fit, in order, and nothing else is left.
    const kept = h.list('a').map((r) => r.runId);
    expect(kept).toEqual(saved.slice(-kept.length).reverse());
    expect(kept.length).toBe(Math.floor(maxBytes / runBytes(jobDir, saved.at(-1)!)));
    expect(readdirSync(jobDir).filter((f) => !kept.some((id) => f.startsWith(id)))).toEqual([]);
  });

  it('counts what an earlier process kept (the start-up scan), so the first saves already evict the oldest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const t = Date.now() - 60_000;
    const before = createHistory({ dataDir: dir });
    const old = Array.from({ length: 5 }, (_, i) => record('a', t + i, { stdoutTail: 'xxx' }));
    for (const r of old) {
      writeFileSync(before.logPaths('a', r.runId).stdout, 'x'.repeat(3000));
      await before.save(r);
    }
    // A run of the earlier process that a crash interrupted: logs, no record — a kept run too.
    const crashed = record('b', t + 10);
    writeFileSync(before.logPaths('b', crashed.runId).stdout, 'y'.repeat(3000));
    // 5 × ~3.35 KB + 3 KB ≈ 19.8 KB > 17 KB: the oldest goes.
    const h = createHistory({ dataDir: dir, maxBytes: 17_000 });
    expect(await h.prune()).toBe(1);
    expect(h.usage().runs).toBe(5);
    const next = record('a', Date.now(), { stdoutTail: 'zzz' });
    writeFileSync(h.logPaths('a', next.runId).stdout, 'z'.repeat(3000));
    await h.save(next);
    // The save takes the total over again: the next oldest goes at once.
    expect(h.usage().bytes).toBeLessThanOrEqual(17_000);
    expect(h.list('a').map((r) => r.runId)).toEqual([next.runId, ...old.slice(2).map((r) => r.runId).reverse()]);
    expect(readdirSync(join(dir, 'runs', 'b'))).toEqual([`${crashed.runId}.stdout.log`]);
  });

  it('leaves a run in progress (logs, no record yet) alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const h = createHistory({ dataDir: dir, maxBytes: 5000 });
    const running = record('a', Date.now() + 1000);
    writeFileSync(h.logPaths('a', running.runId).stdout, 'r'.repeat(8000));
    expect(await h.prune()).toBe(0);
    expect(h.usage()).toEqual({ runs: 0, bytes: 0 });
    expect(readFileSync(h.logPaths('a', running.runId).stdout, 'utf8')).toHaveLength(8000);
  });
});

describe('run history: the tally of runs per job (summary)', () => {
  const T = 1_000_000;
  it.each<[string, TalliedRun[], number, ReturnType<typeof tallyRuns>]>([
    ['nothing kept', [], 0, []],
    ['counts runs that ended at or after since, per job in name order', [
      { job: 'b', endedAt: T }, { job: 'a', endedAt: T + 1 }, { job: 'a', endedAt: T - 1 }, { job: 'b', endedAt: T + 5 },
    ], T, [
      { job: 'a', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null },
      { job: 'b', runs: 2, failures: 0, timedOut: 0, lastFailureAt: null },
    ]],
    ['failures are failed and timed-out runs; lastFailureAt the latest end among them', [
      { job: 'a', endedAt: T + 30, fault: 'failed' }, { job: 'a', endedAt: T + 50, fault: 'timed-out' }, { job: 'a', endedAt: T + 90 },
      { job: 'a', endedAt: T + 10, fault: 'failed' }, { job: 'a', endedAt: T - 10, fault: 'timed-out' },
    ], T, [{ job: 'a', runs: 4, failures: 3, timedOut: 1, lastFailureAt: T + 50 }]],
    ['runs without an end time (no record, an unreadable one) are not counted', [
      { job: 'a', endedAt: null }, { job: 'a' }, { job: 'a', endedAt: T, fault: 'failed' },
    ], 0, [{ job: 'a', runs: 1, failures: 1, timedOut: 0, lastFailureAt: T }]],
    ['a job whose runs all ended before since is left out', [{ job: 'old', endedAt: T - 1 }, { job: 'new', endedAt: T }], T, [
      { job: 'new', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null },
    ]],
  ])('%s', (_name, runs, since, want) => {
    expect(tallyRuns(runs, since)).toEqual(want);
  });

  it('counts every run saved, by outcome, that ended at or after since — without reading a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const h = createHistory({ dataDir: dir });
    const now = Date.now();
    const since = now - 3_600_000;
    const runs = [
      record('shell', now - 7_200_000), // ended before since
      record('shell', now - 3_000_000),
      record('shell', now - 2_000_000, { status: 'failed', exitCode: 1 }),
      record('shell', now - 1_000_000),
      record('node', now - 500_000, { status: 'timed-out', exitCode: null }),
      record('node', now - 400_000, { status: 'aborted', exitCode: null }),
      // Started before since, ended after it: counted (runs that ended in the window).
      record('long', since - 60_000, { endedAt: since + 1, durationMs: 60_001 }),
    ];
    for (const r of runs) await h.save(r);
    const want = {
      since,
      jobs: [
        { job: 'long', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null },
        { job: 'node', runs: 2, failures: 1, timedOut: 1, lastFailureAt: runs[4]!.endedAt },
        { job: 'shell', runs: 3, failures: 1, timedOut: 0, lastFailureAt: runs[2]!.endedAt },
      ],
    };
    expect(await h.summary(since)).toEqual(want);
    // From memory: records spoiled behind the history's back change nothing until a scan needs them.
    for (const r of runs) writeFileSync(join(dir, 'runs', r.job, `${r.runId}.json`), '{"half');
    expect(await h.summary(since)).toEqual(want);
    expect(await h.summary(0)).toMatchObject({ since: 0, jobs: [{ job: 'long', runs: 1 }, { job: 'node', runs: 2 }, { job: 'shell', runs: 4 }] });
  });

  it('counts what an earlier process kept (the start-up scan reads each record once), skipping corrupt records and record-less logs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const { logger, lines } = capturingLogger();
    const now = Date.now();
    const before = createHistory({ dataDir: dir });
    const kept = [
      record('a', now - 50_000),
      record('a', now - 40_000, { status: 'failed', exitCode: 2 }),
      record('a', now - 30_000, { status: 'timed-out', exitCode: null }),
      record('b', now - 20_000),
    ];
    for (const r of kept) await before.save(r);
    const corrupt = record('a', now - 10_000, { status: 'failed' });
    writeFileSync(join(dir, 'runs', 'a', `${corrupt.runId}.json`), JSON.stringify(corrupt).slice(0, 30));
    const crashed = record('b', now - 5_000);
    writeFileSync(before.logPaths('b', crashed.runId).stdout, 'cut short by a crash\n');

    const h = createHistory({ dataDir: dir, logger });
    // No prune yet: the first summary waits for a scan of the folder (it starts one).
    const first = await h.summary(now - 60_000);
    expect(first.jobs).toEqual([
      { job: 'a', runs: 3, failures: 2, timedOut: 1, lastFailureAt: kept[2]!.endedAt },
      { job: 'b', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null },
    ]);
    expect(h.usage().runs).toBe(6); // the corrupt and the record-less run are kept (by size), not counted
    expect(lines.filter((l) => l.msg === 'skipping a run record that cannot be read').map((l) => l.file)).toEqual([join(dir, 'runs', 'a', `${corrupt.runId}.json`)]);

    // A record that appears behind the index's back is counted from the next retention scan;
    // what the index already knew is not read again (spoiling it changes nothing).
    const late = record('b', now - 1_000, { status: 'failed', exitCode: 1 });
    writeFileSync(join(dir, 'runs', 'b', `${late.runId}.json`), JSON.stringify(late));
    writeFileSync(join(dir, 'runs', 'a', `${kept[1]!.runId}.json`), 'garbage');
    expect((await h.summary(now - 60_000)).jobs.find((j) => j.job === 'b')?.runs).toBe(1);
    await h.prune();
    expect((await h.summary(now - 60_000)).jobs).toEqual([
      { job: 'a', runs: 3, failures: 2, timedOut: 1, lastFailureAt: kept[2]!.endedAt },
      { job: 'b', runs: 2, failures: 1, timedOut: 0, lastFailureAt: late.endedAt },
    ]);
  });

  it('a first summary before any prune scans without pruning: it removes nothing; the prune then does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const now = Date.now();
    const old = record('a', now - 120_000, { status: 'failed' });
    const recent = record('a', now - 1000);
    const before = createHistory({ dataDir: dir });
    await before.save(old);
    await before.save(recent);
    const h = createHistory({ dataDir: dir, maxAgeMs: 60_000 });
    const [first, again] = await Promise.all([h.summary(0), h.summary(now - 60_000)]); // one scan, joined
    expect(first.jobs).toEqual([{ job: 'a', runs: 2, failures: 1, timedOut: 0, lastFailureAt: old.endedAt }]);
    expect(again.jobs).toEqual([{ job: 'a', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null }]);
    expect(readdirSync(join(dir, 'runs', 'a')).sort()).toEqual([`${old.runId}.json`, `${recent.runId}.json`].sort());
    expect(await h.prune(now)).toBe(1);
    expect((await h.summary(0)).jobs).toEqual([{ job: 'a', runs: 1, failures: 0, timedOut: 0, lastFailureAt: null }]);
  });

  it('forgets runs as they are evicted: by size at a save, by age at a prune', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hist-'));
    const day = 86_400_000;
    const now = Date.now();
    const h = createHistory({ dataDir: dir, maxAgeMs: 2 * day, maxBytes: 12_000 });
    await h.prune(now); // the start-up scan (empty)
    const old = record('a', now - 3 * day, { status: 'failed', endedAt: now - 3 * day + 5 });
    await h.save(old);
    expect((await h.summary(0)).jobs).toEqual([{ job: 'a', runs: 1, failures: 1, timedOut: 0, lastFailureAt: old.endedAt }]);
    expect(await h.prune(now)).toBe(1);
    expect((await h.summary(0)).jobs).toEqual([]);
    const saved: RunRecord[] = [];
    for (let i = 0; i < 6; i += 1) {
      const r = record('big', now - 60_000 + i * 1000, { stdoutTail: 'xxx' });
      writeFileSync(h.logPaths('big', r.runId).stdout, 'x'.repeat(3500));
      await h.save(r);
      saved.push(r);
    }
    // ~3.85 KB a run under 12 KB: three are kept, and only they are counted.
    expect(h.usage().runs).toBe(3);
    expect(await h.summary(0)).toEqual({ since: 0, jobs: [{ job: 'big', runs: 3, failures: 0, timedOut: 0, lastFailureAt: null }] });
    expect(await h.summary(saved[4]!.endedAt)).toEqual({ since: saved[4]!.endedAt, jobs: [{ job: 'big', runs: 2, failures: 0, timedOut: 0, lastFailureAt: null }] });
  });
});
