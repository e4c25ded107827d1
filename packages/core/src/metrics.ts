/**
 * Metrics: a thin factory over prom-client. Every {@link createMetrics} call gets its own
 * `Registry`, so that several executors (or an executor and an allocator) embedded in one process
 * never collide on a metric name; `metrics()` renders that registry plus the process's own figures.
 *
 * What it guarantees:
 * - Registering a name twice on one registry returns the metric registered first (get-or-create,
 *   as recipes and clients that share a registry need); a name registered as another type fails
 *   with a `usage` error.
 * - prom-client's default process and Node metrics (`process_resident_memory_bytes`,
 *   `process_cpu_seconds_total`, `nodejs_heap_size_total_bytes`, `nodejs_heap_size_used_bytes`,
 *   `nodejs_external_memory_bytes`, `nodejs_eventloop_lag_seconds` and the event-loop lag
 *   percentiles, GC, handles, file descriptors…) are collected once per process, on one process-wide
 *   registry, and appended to every registry's text: they describe the process, not an executor,
 *   and collecting them per registry would start one event-loop monitor per embedded executor.
 *
 * What it does not: push metrics anywhere, or keep history; Prometheus scrapes `/metrics`.
 * Every metric Orrery exports is listed in `docs/metrics.md`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { OrreryError } from './errors.js';

export type { Counter, Gauge, Histogram } from 'prom-client';

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * Append the process's default metrics (prom-client's `collectDefaultMetrics`, collected once
   * per process) to {@link Metrics.metrics}. Default true.
   */
  processMetrics?: boolean;
}

/** One registry of metrics with get-or-create registration. */
export interface Metrics {
  /** The prom-client registry this handle registers on. */
  readonly registry: Registry;
  /** The content type of {@link Metrics.metrics}' text (Prometheus text format 0.0.4). */
  readonly contentType: string;
  /** A counter; `labelNames` must list every label its samples carry. */
  counter<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  /** A gauge; `labelNames` must list every label its samples carry. */
  gauge<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): Gauge<L>;
  /** A histogram with the given bucket upper bounds (ascending; `+Inf` is added by prom-client). */
  histogram<L extends string = never>(name: string, help: string, buckets: readonly number[], labelNames?: readonly L[]): Histogram<L>;
  /**
   * Calls `callback` before every rendering (for gauges read at scrape time, such as runs in
   * progress). A callback that throws is skipped for that rendering. Returns the unsubscribe.
   */
  onCollect(callback: () => void): () => void;
  /** The Prometheus text of this registry, then the process's default metrics (if enabled). */
  metrics(): Promise<string>;
}

let processRegistry: Registry | undefined;
/** The process-wide registry of prom-client's default metrics, created (and collecting) on first use. */
function processDefaults(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Creates a registry of its own (see the module header). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const withProcess = options.processMetrics ?? true;
  const collectors = new Set<() => void>();
  if (withProcess) processDefaults();

  function getOrCreate<M extends Metric<string>>(name: string, type: new (...args: never[]) => M, create: () => M): M {
    const existing = registry.getSingleMetric(name);
    if (existing === undefined) return create();
    if (!(existing instanceof type)) {
      throw new OrreryError('usage', `metric '${name}' is already registered as another type`, { details: { name } });
    }
    return existing;
  }

  return {
    registry,
    contentType: registry.contentType,
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      getOrCreate(name, Counter<L>, () => new Counter<L>({ name, help, labelNames, registers: [registry] })),
    gauge: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      getOrCreate(name, Gauge<L>, () => new Gauge<L>({ name, help, labelNames, registers: [registry] })),
    histogram: <L extends string>(name: string, help: string, buckets: readonly number[], labelNames: readonly L[] = []) =>
      getOrCreate(name, Histogram<L>, () => new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [registry] })),
    onCollect(callback) {
      const entry = (): void => callback();
      collectors.add(entry);
      return () => void collectors.delete(entry);
    },
    async metrics() {
      for (const collect of collectors) {
        try {
          collect();
        } catch {
          // A broken collector leaves its gauge at the last value; the rest are still served.
        }
      }
      const own = await registry.metrics();
      if (!withProcess) return own;
      const process = await processDefaults().metrics();
      return `${own.endsWith('\n') || own === '' ? own : `${own}\n`}${process}`;
    },
  };
}

type Labels = Record<string, string>;

/** Parses a sample line's label set (`{a="x",b="y"}`), unescaping values. */
function parseLabels(text: string): Labels {
  const labels: Labels = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const m of text.matchAll(re)) labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return labels;
}

/**
 * Reads one sample's value out of Prometheus text (tests and benchmarks use it): the first sample
 * named `name` whose labels are exactly `labels` (in any order). `undefined` when there is none.
 */
export function readMetric(text: string, name: string, labels: Labels = {}): number | undefined {
  const want = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labelText = '';
    let valueText: string;
    if (rest.startsWith('{')) {
      const end = rest.lastIndexOf('}');
      if (end < 0) continue;
      labelText = rest.slice(1, end);
      valueText = rest.slice(end + 1);
    } else if (rest.startsWith(' ')) valueText = rest;
    else continue;
    const got = Object.entries(parseLabels(labelText)).sort(([a], [b]) => (a < b ? -1 : 1));
    if (JSON.stringify(got) !== JSON.stringify(want)) continue;
    const value = valueText.trim().split(/\s+/)[0]!;
    return value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value);
  }
  return undefined;
}
