/**
 * A minimal Prometheus metrics registry (counters, gauges, summaries without quantiles) and the
 * text exposition format. Enough for `/metrics` of Orrery's processes, without a dependency.
 */

type Labels = Record<string, string>;

interface Series {
  labels: Labels;
  value: number;
}

interface Metric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'summary';
  series: Map<string, Series & { sum?: number; count?: number }>;
}

/** A counter or gauge handle. */
export interface NumberMetric {
  inc(labels?: Labels, by?: number): void;
  set(value: number, labels?: Labels): void;
  get(labels?: Labels): number;
}

/** A summary: observations' sum and count. */
export interface SummaryMetric {
  observe(value: number, labels?: Labels): void;
  count(labels?: Labels): number;
}

/** A registry of metrics. */
export interface Metrics {
  counter(name: string, help: string): NumberMetric;
  gauge(name: string, help: string): NumberMetric;
  summary(name: string, help: string): SummaryMetric;
  /** The Prometheus text format (version 0.0.4). */
  render(): string;
}

const keyOf = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels: Labels): string => {
  const entries = Object.entries(labels);
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}`;
};

/** Creates an empty registry. */
export function createMetrics(): Metrics {
  const metrics = new Map<string, Metric>();
  const register = (name: string, help: string, type: Metric['type']): Metric => {
    let m = metrics.get(name);
    if (!m) metrics.set(name, (m = { name, help, type, series: new Map() }));
    return m;
  };
  const series = (m: Metric, labels: Labels) => {
    const key = keyOf(labels);
    let s = m.series.get(key);
    if (!s) m.series.set(key, (s = { labels, value: 0, sum: 0, count: 0 }));
    return s;
  };
  const numberMetric = (m: Metric): NumberMetric => ({
    inc: (labels = {}, by = 1) => { series(m, labels).value += by; },
    set: (value, labels = {}) => { series(m, labels).value = value; },
    get: (labels = {}) => m.series.get(keyOf(labels))?.value ?? 0,
  });
  return {
    counter: (name, help) => numberMetric(register(name, help, 'counter')),
    gauge: (name, help) => numberMetric(register(name, help, 'gauge')),
    summary(name, help) {
      const m = register(name, help, 'summary');
      return {
        observe: (value, labels = {}) => {
          const s = series(m, labels);
          s.sum! += value;
          s.count! += 1;
        },
        count: (labels = {}) => m.series.get(keyOf(labels))?.count ?? 0,
      };
    },
    render() {
      const lines: string[] = processLines();
      for (const m of metrics.values()) {
        lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`);
        for (const s of m.series.values()) {
          if (m.type === 'summary') {
            lines.push(`${m.name}_sum${labelText(s.labels)} ${s.sum}`, `${m.name}_count${labelText(s.labels)} ${s.count}`);
          } else lines.push(`${m.name}${labelText(s.labels)} ${s.value}`);
        }
      }
      return lines.join('\n') + '\n';
    },
  };
}

/**
 * The process's own figures, as Prometheus client libraries name them: resident memory, CPU time,
 * and the V8 heap (so an operator can tell a growing heap from native memory).
 */
function processLines(): string[] {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  const sample = (name: string, help: string, type: 'counter' | 'gauge', value: number): string[] => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`];
  return [
    ...sample('process_resident_memory_bytes', 'Resident memory size in bytes.', 'gauge', mem.rss),
    ...sample('process_cpu_seconds_total', 'User and system CPU time spent in seconds.', 'counter', (cpu.user + cpu.system) / 1e6),
    ...sample('nodejs_heap_size_total_bytes', 'V8 heap size in bytes.', 'gauge', mem.heapTotal),
    ...sample('nodejs_heap_size_used_bytes', 'V8 heap used in bytes.', 'gauge', mem.heapUsed),
    ...sample('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript objects, in bytes.', 'gauge', mem.external),
  ];
}

/** Reads one sample's value out of Prometheus text (tests and benchmarks use it). */
export function readMetric(text: string, name: string, labels: Labels = {}): number | undefined {
  const want = `${name}${labelText(labels)} `;
  const line = text.split('\n').find((l) => l.startsWith(want));
  return line === undefined ? undefined : Number(line.slice(want.length));
}
