import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHistory, type RunRecord } from './history.js';

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
