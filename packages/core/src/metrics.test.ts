import { describe, expect, it } from 'vitest';
import { hasErrorCode } from './errors.js';
import { createMetrics, readMetric } from './metrics.js';

describe('createMetrics', () => {
  it('gives every call its own registry: the same names in two never collide', async () => {
    const a = createMetrics({ processMetrics: false });
    const b = createMetrics({ processMetrics: false });
    a.counter('orrery_x_total', 'x', ['kind']).inc({ kind: 'k' }, 2);
    b.counter('orrery_x_total', 'x', ['kind']).inc({ kind: 'k' });
    expect(readMetric(await a.metrics(), 'orrery_x_total', { kind: 'k' })).toBe(2);
    expect(readMetric(await b.metrics(), 'orrery_x_total', { kind: 'k' })).toBe(1);
  });

  it('registers a name once (get-or-create), and refuses it as another type', async () => {
    const m = createMetrics({ processMetrics: false });
    const first = m.gauge('orrery_g', 'g');
    expect(m.gauge('orrery_g', 'g')).toBe(first);
    let error: unknown;
    try {
      m.counter('orrery_g', 'g');
    } catch (e) {
      error = e;
    }
    expect(hasErrorCode(error, 'usage')).toBe(true);
    expect(String(error)).toContain('orrery_g');
  });

  it('renders histograms with their buckets, sum and count', async () => {
    const m = createMetrics({ processMetrics: false });
    const h = m.histogram('orrery_h_seconds', 'h', [0.1, 1], ['outcome']);
    h.observe({ outcome: 'ok' }, 0.05);
    h.observe({ outcome: 'ok' }, 0.5);
    h.observe({ outcome: 'ok' }, 5);
    const text = await m.metrics();
    expect(text).toContain('# TYPE orrery_h_seconds histogram');
    expect(readMetric(text, 'orrery_h_seconds_bucket', { le: '0.1', outcome: 'ok' })).toBe(1);
    expect(readMetric(text, 'orrery_h_seconds_bucket', { outcome: 'ok', le: '1' })).toBe(2);
    expect(readMetric(text, 'orrery_h_seconds_bucket', { le: '+Inf', outcome: 'ok' })).toBe(3);
    expect(readMetric(text, 'orrery_h_seconds_count', { outcome: 'ok' })).toBe(3);
    expect(readMetric(text, 'orrery_h_seconds_sum', { outcome: 'ok' })).toBeCloseTo(5.55);
    expect(readMetric(text, 'orrery_h_seconds_count', { outcome: 'other' })).toBeUndefined();
  });

  it("appends the process's default metrics, the names the benches and dashboards read included", async () => {
    const m = createMetrics();
    m.counter('orrery_own_total', 'own').inc();
    const text = await m.metrics();
    expect(readMetric(text, 'orrery_own_total')).toBe(1);
    for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
      expect(readMetric(text, name), name).toBeGreaterThanOrEqual(0);
    }
    expect(readMetric(text, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    // Every name once: the process's metrics and the registry's do not overlap.
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
    // A second registry shares the process's collectors rather than starting its own.
    expect(readMetric(await createMetrics().metrics(), 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('calls onCollect callbacks before each rendering; a throwing one is skipped', async () => {
    const m = createMetrics({ processMetrics: false });
    const g = m.gauge('orrery_now', 'now');
    let value = 1;
    const off = m.onCollect(() => g.set(value));
    m.onCollect(() => { throw new Error('broken collector'); });
    expect(readMetric(await m.metrics(), 'orrery_now')).toBe(1);
    value = 7;
    expect(readMetric(await m.metrics(), 'orrery_now')).toBe(7);
    off();
    value = 9;
    expect(readMetric(await m.metrics(), 'orrery_now')).toBe(7);
  });
});

describe('readMetric', () => {
  const text = [
    '# HELP a_total a', '# TYPE a_total counter',
    'a_total{x="1",y="two"} 3', 'a_total{x="2"} 4', 'a_total 5', 'a_total_other 6', 'b{v="q\\"uote"} 7', 'c NaN',
  ].join('\n');
  it.each([
    ['a_total', {}, 5], ['a_total', { x: '2' }, 4], ['a_total', { y: 'two', x: '1' }, 3], ['a_total', { x: '1' }, undefined],
    ['a_total_other', {}, 6], ['b', { v: 'q"uote' }, 7], ['missing', {}, undefined],
  ] as const)('%s %j is %s', (name, labels, value) => expect(readMetric(text, name, labels)).toBe(value));
});
