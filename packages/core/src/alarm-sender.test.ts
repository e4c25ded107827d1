import { createServer, type IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { alarmBackoffMs, alarmKey, alarmPolicy, classifyAlarmStatus, createAlarmSender, fetchAlarmPost, type AlarmPost, type AlarmSenderOptions } from './alarm-sender.js';
import { createMetrics, readMetric } from './metrics.js';
import { checkNamespaceInfo } from './schemas/namespace.js';

/** A fake clock: `sleep` records its wait and moves the clock forward at once. */
function fakeClock(start = 1_000_000) {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    advance: (ms: number) => { t += ms; },
    sleeps,
    sleep: async (ms: number, signal: AbortSignal) => {
      if (signal.aborted) throw signal.reason;
      sleeps.push(ms);
      t += ms;
    },
  };
}

/** A scripted webhook: answers statuses (or throws for 'network') in order, recording each call's time. */
function scriptedPost(clock: { now(): number }, script: Array<number | 'network'>, fallback: number | 'network' = 200) {
  const calls: Array<{ url: string; body: unknown; at: number }> = [];
  const post: AlarmPost = async (url, body) => {
    calls.push({ url, body: JSON.parse(body) as unknown, at: clock.now() });
    const next = script.shift() ?? fallback;
    if (next === 'network') throw new Error('connect ECONNREFUSED');
    return { status: next };
  };
  return { post, calls };
}

const capture = () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => { lines.push(JSON.parse(l) as Record<string, unknown>); } });
  return { logger, lines };
};

const sender = (extra: Partial<AlarmSenderOptions> & Pick<AlarmSenderOptions, 'post'>, clock = fakeClock()) => {
  const metrics = createMetrics({ processMetrics: false });
  const { logger, lines } = capture();
  const s = createAlarmSender({ logger, metrics, now: clock.now, sleep: clock.sleep, ...extra });
  return { s, metrics, lines, clock };
};

const URL = 'http://127.0.0.1:9/hook';

describe('alarm rules', () => {
  it.each([
    [1, 1000], [2, 2000], [3, 4000], [5, 16_000], [6, 30_000], [20, 30_000],
  ])('retry %i waits %i ms', (retry, ms) => expect(alarmBackoffMs(retry)).toBe(ms));

  it.each([
    [200, 'delivered'], [204, 'delivered'], [299, 'delivered'], [301, 'refused'], [400, 'refused'], [404, 'refused'], [429, 'refused'],
    [500, 'retry'], [503, 'retry'], [599, 'retry'], [600, 'refused'], [0, 'refused'],
  ] as const)('status %i is %s', (status, verdict) => expect(classifyAlarmStatus(status)).toBe(verdict));

  it('takes its defaults from the namespace schema', () => {
    const ns = checkNamespaceInfo({});
    expect(ns.ok).toBe(true);
    expect(alarmPolicy(ns.ok ? ns.value.alarm : undefined)).toEqual({ silenceMs: 300_000, timeoutMs: 5000, retries: 3 });
    expect(alarmPolicy({ silenceSeconds: 2, timeoutSeconds: 7, retries: 0 })).toEqual({ silenceMs: 2000, timeoutMs: 7000, retries: 0 });
    expect(alarmPolicy(undefined)).toEqual({ silenceMs: 300_000, timeoutMs: 5000, retries: 3 });
  });

  it('refuses namespace alarm settings out of their limits, naming the field', () => {
    for (const alarm of [{ timeoutSeconds: 0 }, { timeoutSeconds: 61 }, { retries: -1 }, { retries: 11 }, { retries: 1.5 }, { silenceSeconds: 86_401 }]) {
      const r = checkNamespaceInfo({ alarm });
      expect(r.ok, JSON.stringify(alarm)).toBe(false);
      if (!r.ok) expect(r.issues[0]!.field).toBe(`alarm.${Object.keys(alarm)[0]}`);
    }
  });
});

describe('createAlarmSender (fake clock)', () => {
  it('retries network errors and 5xx with doubling backoff, in order, then delivers', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, ['network', 503, 500, 200]);
    const { s, metrics } = sender({ post }, clock);
    const delivered: string[] = [];
    const t0 = clock.now();
    expect(s.send('k', URL, { kind: 'x' }, { retries: 3, onDelivered: () => delivered.push('k') })).toBe('queued');
    await s.idle();
    expect(calls.map((c) => c.at - t0)).toEqual([0, 1000, 3000, 7000]);
    expect(clock.sleeps).toEqual([1000, 2000, 4000]);
    expect(calls.every((c) => JSON.stringify(c.body) === '{"kind":"x"}')).toBe(true);
    expect(delivered).toEqual(['k']);
    const text = await metrics.metrics();
    expect(readMetric(text, 'orrery_alarm_retries_total')).toBe(3);
    await s.close();
  });

  it('gives up after the retries, counting it', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, [], 502);
    const { s, metrics, lines } = sender({ post }, clock);
    s.send('k', URL, {}, { retries: 2 });
    await s.idle();
    expect(calls).toHaveLength(3);
    expect(clock.sleeps).toEqual([1000, 2000]);
    expect(readMetric(await metrics.metrics(), 'orrery_alarms_failed_total', { reason: 'gave-up' })).toBe(1);
    expect(lines.map((l) => l.msg)).toEqual(['alarm POST failed; retrying', 'alarm POST failed; retrying', 'alarm not delivered: every retry failed']);
    await s.close();
  });

  it('never retries a 4xx', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, [400, 200]);
    const { s, metrics } = sender({ post }, clock);
    const delivered: string[] = [];
    s.send('k', URL, {}, { retries: 5, onDelivered: () => delivered.push('k') });
    await s.idle();
    expect(calls).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
    expect(delivered).toEqual([]);
    expect(readMetric(await metrics.metrics(), 'orrery_alarms_failed_total', { reason: 'refused' })).toBe(1);
    await s.close();
  });

  it('sends at most once per key per silence window, windows per key', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, []);
    const { s } = sender({ post }, clock);
    const a = alarmKey('ns', 'run-failed', 'a');
    const b = alarmKey('ns', 'run-failed', 'b');
    const results: string[] = [];
    results.push(s.send(a, URL, { n: 1 }, { silenceMs: 10_000 }));
    results.push(s.send(a, URL, { n: 2 }, { silenceMs: 10_000 }));
    clock.advance(5000);
    results.push(s.send(b, URL, { n: 3 }, { silenceMs: 10_000 }));
    clock.advance(4999);
    results.push(s.send(a, URL, { n: 4 }, { silenceMs: 10_000 }));
    clock.advance(1);
    results.push(s.send(a, URL, { n: 5 }, { silenceMs: 10_000 }));
    results.push(s.send(b, URL, { n: 6 }, { silenceMs: 10_000 }));
    await s.idle();
    expect(results).toEqual(['queued', 'silenced', 'queued', 'silenced', 'queued', 'silenced']);
    expect(calls.map((c) => (c.body as { n: number }).n).sort()).toEqual([1, 3, 5]);
    await s.close();
  });

  it('a silence window of 0 lets every alarm through; a failed alarm still closes its window', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, [404]);
    const { s } = sender({ post }, clock);
    expect(s.send('z', URL, {}, { silenceMs: 0 })).toBe('queued');
    expect(s.send('z', URL, {}, { silenceMs: 0 })).toBe('queued');
    await s.idle();
    expect(calls).toHaveLength(2);
    expect(s.send('f', URL, {}, { silenceMs: 60_000 })).toBe('queued');
    await s.idle();
    expect(s.send('f', URL, {}, { silenceMs: 60_000 })).toBe('silenced');
    await s.close();
  });

  it('bounds its queue: a full queue drops the alarm at once (logged, counted), the caller never waits', async () => {
    const clock = fakeClock();
    const release: Array<() => void> = [];
    const seen: number[] = [];
    // The webhook hangs until the test releases it: one in flight, the rest queued.
    const post: AlarmPost = (_url, body) => new Promise((resolve) => {
      seen.push((JSON.parse(body) as { n: number }).n);
      release.push(() => resolve({ status: 200 }));
    });
    const { s, metrics, lines } = sender({ post, queueSize: 3, concurrency: 1 }, clock);
    const results = [1, 2, 3, 4, 5, 6].map((n) => s.send(`k${n}`, URL, { n }));
    expect(results).toEqual(['queued', 'queued', 'queued', 'queued', 'dropped', 'dropped']);
    expect(readMetric(await metrics.metrics(), 'orrery_alarms_dropped_total', { reason: 'queue-full' })).toBe(2);
    expect(readMetric(await metrics.metrics(), 'orrery_alarm_queue_length')).toBe(3);
    expect(lines.filter((l) => l.msg === 'alarm dropped: the alarm queue is full').map((l) => l.alarmKey)).toEqual(['k5', 'k6']);
    // Released one by one, in order.
    while (seen.length < 4 || release.length > 0) {
      await new Promise((r) => setImmediate(r));
      release.shift()?.();
    }
    await s.idle();
    expect(seen).toEqual([1, 2, 3, 4]);
    await s.close();
  });

  it('close() drops what waits, aborts what is in flight, is idempotent; later sends are dropped', async () => {
    const clock = fakeClock();
    let aborted = 0;
    const post: AlarmPost = (_url, _body, signal) => new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => { aborted += 1; reject(signal.reason); });
    });
    const { s, metrics } = sender({ post, concurrency: 1 }, clock);
    s.send('a', URL, {});
    s.send('b', URL, {});
    s.send('c', URL, {});
    const closing = s.close();
    expect(s.close()).toBe(closing);
    await closing;
    expect(aborted).toBe(1);
    expect(s.send('d', URL, {})).toBe('dropped');
    expect(readMetric(await metrics.metrics(), 'orrery_alarms_dropped_total', { reason: 'closed' })).toBe(3);
  });

  it('drops, never throws on, bad input: empty key, bad URL, a body JSON cannot hold', async () => {
    const clock = fakeClock();
    const { post, calls } = scriptedPost(clock, []);
    const { s, metrics } = sender({ post }, clock);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(s.send('', URL, {})).toBe('dropped');
    expect(s.send('k', 'ftp://x/y', {})).toBe('dropped');
    expect(s.send('k', 'not a url', {})).toBe('dropped');
    expect(s.send('k', URL, cyclic)).toBe('dropped');
    expect(s.send('k', URL, { big: 1n })).toBe('dropped');
    expect(s.send('k', URL, { ok: true })).toBe('queued'); // none of the bad ones took the window
    await s.idle();
    expect(calls).toHaveLength(1);
    expect(readMetric(await metrics.metrics(), 'orrery_alarms_dropped_total', { reason: 'invalid' })).toBe(5);
    await s.close();
  });

  it('an onDelivered that throws is logged, not thrown', async () => {
    const clock = fakeClock();
    const { post } = scriptedPost(clock, []);
    const { s, lines } = sender({ post }, clock);
    s.send('k', URL, {}, { onDelivered: () => { throw new Error('listener bug'); } });
    await s.idle();
    expect(lines.map((l) => l.msg)).toContain('alarm delivered, but its onDelivered callback failed');
    await s.close();
  });
});

describe('fetchAlarmPost against a real node:http server', () => {
  it('POSTs JSON, times out a hanging webhook and retries it, then delivers', async () => {
    const bodies: Array<{ type: string | undefined; body: string }> = [];
    let hangFirst = true;
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push({ type: req.headers['content-type'], body });
        if (hangFirst) {
          hangFirst = false;
          return; // never answers: the sender's timeout abandons it
        }
        res.statusCode = 202;
        res.end('accepted');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const { logger } = capture();
    const s = createAlarmSender({ logger, post: fetchAlarmPost, backoffBaseMs: 1 });
    try {
      const delivered: string[] = [];
      expect(s.send('k', url, { kind: 'run-failed', job: 'a' }, { timeoutMs: 300, retries: 2, onDelivered: () => delivered.push('k') })).toBe('queued');
      await s.idle();
      expect(delivered).toEqual(['k']);
      expect(bodies).toEqual([
        { type: 'application/json', body: '{"kind":"run-failed","job":"a"}' },
        { type: 'application/json', body: '{"kind":"run-failed","job":"a"}' },
      ]);
    } finally {
      await s.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
