// `npm run bench [NAME ...]`: runs every benchmark (or those named), writes bench/results/<date>.json
// and regenerates the tables of BENCHMARKS.md from the newest results of each benchmark.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runAllocatorBench, runMixedAllocatorBench } from './allocator-bench.js';
import { alternativeScenario, bestBullmq, renderAlternatives, runAlternativesBench, type AlternativesBenchResult } from './alternatives-bench.js';
import { CONSOLE_BENCH_CONNECTIONS, runConsoleBench, type ConsoleBenchResult } from './console-bench.js';
import { renderCost, runCostBench } from './cost-bench.js';
import { EXECUTOR_BENCH_PARTS, SHELL_FLOOR_RATIO_TARGET, WARMUP_SECONDS, runExecutorBench, type Distribution, type ExecutorBenchPart, type ExecutorBenchResult } from './executor-bench.js';
import { runFailoverBench, type FailoverBenchResult } from './failover-bench.js';
import { renderScale, runScaleBench } from './scale-bench.js';
import { dist, n, newestEntries, openResults, saveResults, writeBenchmarksMd, type BenchEntry, type ResultsFile } from './report.js';

interface Bench {
  name: string;
  title: string;
  /** What a reader needs to repeat it; env overrides included. */
  settings(): Record<string, unknown>;
  run(settings: Record<string, unknown>): Promise<unknown>;
  render(result: unknown, all: ReadonlyMap<string, BenchEntry>): string;
}

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

const BENCHES: Bench[] = [
  {
    name: 'executor',
    title: 'Executor: fire lateness, every job on `* * * * * *`, one executor',
    settings: () => ({
      seconds: env('ORRERY_BENCH_SECONDS', 60),
      // `tx` (transactions per run) is left to the cost curve, which measures it at every rate.
      parts: (process.env.ORRERY_BENCH_EXECUTOR ?? 'node,shell,idle').split(',').map((p) => p.trim()).filter((p) => (EXECUTOR_BENCH_PARTS as readonly string[]).includes(p)),
      nodeWorkers: 8,
      zookeeper: 'standalone, tickTime 500 ms, full JIT',
    }),
    run: (s) => runExecutorBench(s.seconds as number, s.parts as ExecutorBenchPart[]),
    render: (r) => renderExecutor(r as ExecutorBenchResult),
  },
  {
    name: 'alternatives',
    title: 'The alternatives: croner (one process) and BullMQ job schedulers on Redis',
    settings: () => ({ seconds: env('ORRERY_BENCH_SECONDS', 60), sizes: [100, 1000], bullmqConcurrency: [50] }),
    run: (s) => runAlternativesBench({ seconds: s.seconds as number, sizes: s.sizes as number[], bullmqConcurrency: s.bullmqConcurrency as number[] }),
    render: (r, all) => renderComparison(all) + '\n\n' + renderAlternatives(r as AlternativesBenchResult),
  },
  {
    name: 'cost',
    title: 'The cost curve: sustained runs per second until breakdown',
    settings: () => ({ rates: [500, 1000, 1500, 2000, 3000], executors: [1, 4], windowSeconds: 10 }),
    run: (s) => runCostBench({ rates: s.rates as number[], executors: s.executors as number[], windowSeconds: s.windowSeconds as number }),
    render: (r) => renderCost(r as Parameters<typeof renderCost>[0]),
  },
  {
    name: 'scale',
    title: 'Scale: 10,000 jobs × 3 shards × 100 executors on one ZooKeeper',
    settings: () => ({ jobs: env('ORRERY_BENCH_SCALE_JOBS', 10_000), shards: 3, executors: 100, quiet: process.env.ORRERY_BENCH_SCALE_QUIET === '1' }),
    run: (s) => runScaleBench({ jobs: s.jobs as number, shards: 3, executors: 100, quiet: s.quiet as boolean }),
    render: (r) => renderScale(r as Parameters<typeof renderScale>[0]),
  },
  {
    name: 'failover',
    title: 'Failover: kill -9 of the executor running a shard, until its re-run starts on a survivor',
    settings: () => ({ trials: env('ORRERY_BENCH_TRIALS', 12), hostTrials: env('ORRERY_BENCH_HOST_TRIALS', 6) }),
    run: (s) => runFailoverBench(s.trials as number, s.hostTrials as number),
    render: (r) => renderFailover(r as FailoverBenchResult),
  },
  {
    name: 'allocator',
    title: 'Allocator: 1,000 jobs × 10 shards × 100 executors',
    settings: () => ({ runs: 15, warmUp: 3 }),
    run: () => Promise.resolve({ rows: runAllocatorBench(), mixed: runMixedAllocatorBench() }),
    render: (r) => renderAllocator(r as AllocatorResult),
  },
  {
    name: 'console',
    title: 'Console: 10,000 jobs in a namespace',
    settings: () => ({ seconds: env('ORRERY_BENCH_CONSOLE_SECONDS', 10), connections: CONSOLE_BENCH_CONNECTIONS }),
    run: (s) => runConsoleBench(s.seconds as number, process.env.ORRERY_BENCH_CPU_PROF || undefined),
    render: (r) => renderConsole(r as ConsoleBenchResult),
  },
];

type AllocatorResult = { rows: ReturnType<typeof runAllocatorBench>; mixed: ReturnType<typeof runMixedAllocatorBench> };

/** A row's warm-up cell: p99 / max (and the fires missed, when given); a dash for an older result without one. */
function warmupCell(warmup: Distribution | undefined, missed?: number): string {
  if (!warmup || warmup.count === 0) return '–';
  return `${n(warmup.p99)} / ${n(warmup.max)}${missed === undefined ? '' : `, ${n(missed)}`}`;
}

function renderExecutor(r: ExecutorBenchResult): string {
  const out = [
    r.rows.some((row) => row.warmup)
      ? `Lateness = the run's start − its scheduled fire time, over whole seconds of steady state, from ${WARMUP_SECONDS} s after it began — at the first two fires in a row that ran for every job, or 12 s after the jobs were applied if that never happens.${r.rows.some((row) => row.quietFirst) ? ` Shell jobs are written firing once a year, applied, then set to \`* * * * * *\` — their start-up counts from that change (enabled one after another with their cron, 1,000 of them took a minute to be applied while the first already fired a shell each a second); Node jobs are enabled one after another with their cron.` : ''} Start-up = the time until those two fires and the fires missed meanwhile; warm-up = the ${WARMUP_SECONDS} s after them, not in the window (every system of the comparison gets them). Misfire policy \`skip\`.`
      : 'Lateness = the run\'s start − its scheduled fire time, over whole seconds of steady state (from the first two fires in a row that ran for every job, or 12 s after the jobs were applied if that never happens); start-up = the time until then and the fires missed meanwhile. Misfire policy `skip`.',
    '',
    '| scenario | lateness p50 / p99 / max (ms) | runs | missed | duplicates | failover re-runs | not succeeded | start-up: s until steady, fires missed meanwhile | warm-up lateness p99 / max (ms), missed |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((row) => `| ${row.scenario} | ${dist(row.lateness)} | ${n(row.runs)} | ${n(row.missed)} | ${row.duplicates} | ${row.failoverReruns === undefined ? '–' : n(row.failoverReruns)} | ${n(row.failed)} | ${row.startupSeconds} s, ${n(row.startupMissed)} | ${warmupCell(row.warmup, row.warmupMissed ?? 0)} |`),
    '',
    `Spawn floor (this Node spawning 100 \`sh -c 'exit 0'\` at once, ms from the burst to each spawn, ${r.floor.count} spawns): p50 ${n(r.floor.p50, 1)}, p99 ${n(r.floor.p99, 1)}, max ${n(r.floor.max, 1)}.`,
  ];
  if (r.shellFloorRatio !== undefined) out.push(`100 shell jobs' p99 ÷ floor p99 = **${r.shellFloorRatio.toFixed(2)}** (target ≤ ${SHELL_FLOOR_RATIO_TARGET}: ${r.shellFloorRatio <= SHELL_FLOOR_RATIO_TARGET ? 'met' : 'missed'}).`);
  if (r.idle) out.push(`Idle executor with ${n(r.idle.jobs)} jobs, ${r.idle.seconds.toFixed(0)} s after they were applied: RSS ${r.idle.rssMb.toFixed(0)} MB (peak ${r.idle.peakRssMb.toFixed(0)} MB), CPU ${r.idle.cpuPercent.toFixed(1)} %.`);
  if (r.tx) out.push(`ZooKeeper transactions per shard run: ${n(r.tx.transactions)} for ${n(r.tx.runs)} runs = **${r.tx.perRun.toFixed(2)}** per run (target ≤ 2; Zxid delta from \`srvr\` between two quiet points).`);
  return out.join('\n');
}

/** Orrery's rows (the executor bench) and the alternatives' in one table, when both were measured. */
function renderComparison(all: ReadonlyMap<string, BenchEntry>): string {
  const ex = all.get('executor');
  const alt = all.get('alternatives');
  if (!ex || !alt) return 'Side by side: needs the executor and alternatives benchmarks (`npm run bench executor alternatives`).';
  const orrery = (ex.result as Partial<ExecutorBenchResult>).rows ?? [];
  const others = (alt.result as Partial<AlternativesBenchResult>).rows ?? [];
  const lines = [
    `Side by side — the same load (N no-op jobs on \`* * * * * *\`, ${(ex.settings.seconds as number)} s${orrery.some((o) => o.warmup) && others.some((o) => o.warmup) ? ` after the same ${WARMUP_SECONDS}-s warm-up, reported apart` : ''}), the same machine, measured ${ex.startedAt.slice(0, 16)} (Orrery) and ${alt.startedAt.slice(0, 16)} (the others) UTC. Lateness = start − scheduled time, ms.`,
    '',
    '| jobs | system | lateness p50 / p99 / max (ms) | runs | missed | duplicates | p99 ÷ croner\'s p99 | warm-up p99 / max (ms) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const verdicts: string[] = [];
  for (const size of [100, 1000]) {
    const croner = others.find((o) => o.system === 'croner' && o.jobs === size);
    const ratio = (p99: number) => (croner && croner.lateness.p99 > 0 ? `${(p99 / croner.lateness.p99).toFixed(1)} ×` : '–');
    const rows = [
      ...orrery.filter((o) => o.jobs === size).map((o) => ({ system: `Orrery, ${o.kind} jobs`, lateness: o.lateness, runs: o.runs, missed: o.missed, duplicates: o.duplicates, warmup: o.warmup })),
      ...others.filter((o) => o.jobs === size).map((o) => ({ system: alternativeScenario(o).replace(/^[\d,]+ jobs, /, ''), lateness: o.lateness, runs: o.runs, missed: o.missed, duplicates: o.duplicates, warmup: o.warmup })),
    ];
    for (const row of rows) lines.push(`| ${n(size)} | ${row.system} | ${dist(row.lateness)} | ${n(row.runs)} | ${n(row.missed)} | ${n(row.duplicates)} | ${ratio(row.lateness.p99)} | ${warmupCell(row.warmup)} |`);
    const node = orrery.find((o) => o.jobs === size && o.kind === 'node');
    // BullMQ at its best concurrency of those measured (the fair one to compare with).
    const bull = others.length ? bestBullmq(alt.result as AlternativesBenchResult, size) : undefined;
    if (node && croner) {
      const r = node.lateness.p99 / croner.lateness.p99;
      verdicts.push(`at ${n(size)} jobs Orrery's Node p99 is ${r.toFixed(1)} × croner's (target ≤ 1.5: ${r <= 1.5 ? 'met' : 'missed'})`);
    }
    if (node && bull) verdicts.push(`${node.lateness.p99 < bull.lateness.p99 && node.missed <= bull.missed ? 'ahead of' : 'behind'} BullMQ at its best (p99 ${n(node.lateness.p99)} vs ${n(bull.lateness.p99)} ms, missed ${n(node.missed)} vs ${n(bull.missed)})`);
  }
  if (verdicts.length) lines.push('', `Targets: ${verdicts.join('; ')}.`);
  return lines.join('\n');
}

function renderFailover(r: FailoverBenchResult): string {
  const killed = { process: 'the executor process alone (its guard closes the session)', host: 'the executor, its guard and its job (host-loss-like: the session expires)' };
  const process = r.rows.find((row) => row.kill === 'process');
  return [
    `ZooKeeper tickTime ${r.tickMs} ms; three executors, a one-shard job whose runs last a minute, started on demand each trial. Times in ms, p50 / p99 / max.`,
    '',
    '| kill -9 of | session timeout | trials | failover (kill → re-run start) | detection (→ session ended) | reassignment (→ applied moved) | start (→ re-run started) | overlaps |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map((row) => `| ${killed[row.kill]} | ${row.sessionSeconds} s | ${row.trials} | ${dist(row.total)} | ${dist(row.detection)} | ${dist(row.reassignment)} | ${dist(row.start)} | ${row.overlaps} |`),
    '',
    `Graceful shutdown handoff (SIGTERM → applied gives the leaver's idle shards away), ${r.handoff.trials} trials: ${dist(r.handoff.handoff)} ms.`,
    ...(process ? [`Targets: the process alone, re-run p99 ≤ 1.5 s with zero overlap — ${process.total.p99 <= 1500 && process.overlaps === 0 ? 'met' : 'missed'}; host-loss-like ≤ session timeout + 1 s at p99 — ${r.rows.filter((row) => row.kill === 'host').every((row) => row.total.p99 <= row.sessionSeconds * 1000 + 1000) ? 'met' : 'missed'}.`] : []),
  ].join('\n');
}

function renderAllocator(r: AllocatorResult): string {
  return [
    'The allocator\'s pure function in this process; times in ms: p50 (max) of 15 runs after 3 warm-up runs.',
    '',
    '| strategy | full allocation | one join | one leave | moved on join | moved on leave | max/min load after join | after leave | per-job spread full/join/leave |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.strategy} | ${x.fullMs} | ${x.joinMs} | ${x.leaveMs} | ${x.movedOnJoin} | ${x.movedOnLeave} | ${x.loadAfterJoin} | ${x.loadAfterLeave} | ${x.spread} |`),
    '',
    'Mixed: 200 jobs of 1–60 shards, loadLevel 1–3, 20 executors.',
    '',
    '| strategy | per-job spread full/join/leave | max − min load full/join/leave | moved on join | moved on leave |',
    '|---|---|---|---|---|',
    ...r.mixed.map((x) => `| ${x.strategy} | ${x.spread} | ${x.loadGap} | ${x.movedOnJoin} | ${x.movedOnLeave} |`),
  ].join('\n');
}

function renderConsole(r: ConsoleBenchResult): string {
  const out = [
    `${n(r.jobs)} jobs, ${CONSOLE_BENCH_CONNECTIONS} concurrent clients (autocannon), ${r.seconds} s per route after a ${r.warmupSeconds ?? 5} s warm-up. ${n(r.nodes)} nodes written in ${r.writeSeconds.toFixed(1)} s; the console healthy (cache loaded) ${r.consoleStartSeconds.toFixed(1)} s after its spawn.`,
    '',
    '| route | p50 / p99 / max (ms) | requests/s | requests | failed | console CPU | ZooKeeper packets (all / console session) | ZooKeeper requests per GET |',
    '|---|---|---|---|---|---|---|---|',
    `| idle baseline, ${r.seconds} s | | | | | | ${r.idle.zkPackets} / ${r.idle.consoleSessionPackets ?? '?'} | |`,
    ...r.rows.map((row) => `| ${row.route} | ${row.p50} / ${row.p99} / ${row.max} | ${Math.round(row.requestsPerSecond)} | ${n(row.requests)} | ${row.failed} | ${Math.round(row.consoleCpuPercent)} % | ${row.zkPackets} / ${row.consoleSessionPackets ?? '?'} | ${row.zkRequestsPerGet.toFixed(4)} |`),
    '',
    `Console RSS: ${r.rss.loadedMb.toFixed(0)} MB loaded and idle, ${r.rss.afterMb.toFixed(0)} MB ${r.seconds} s after the load, peak ${r.rss.peakMb.toFixed(0)} MB (VmHWM).`,
  ];
  if (r.ui && 'error' in r.ui) out.push('', `The UI's jobs page: the measurement failed: ${r.ui.error}`);
  else if (r.ui) {
    const v = r.ui.visits;
    out.push('', `The UI's jobs page in headless Chromium (1400 × 900), ${n(r.ui.jobs)} jobs, ${v.length} visits: interactive (rows shown, search usable) ${v.map((x) => x.interactiveMs).join(' / ')} ms after the navigation started.`);
    out.push(`Scrolling from the first job to the last, 600 px a frame: ${(r.ui.scroll.totalMs / 1000).toFixed(1)} s, ${r.ui.scroll.frames} frames, frame interval p50 ${r.ui.scroll.p50.toFixed(1)} / p99 ${r.ui.scroll.p99.toFixed(1)} / max ${r.ui.scroll.max.toFixed(1)} ms, ${r.ui.scroll.over50ms} frames over 50 ms.`);
  } else out.push('', 'The UI\'s jobs page: not measured (Chromium is not installed: `npm run bench` and `npm test` install it).');
  return out.join('\n');
}

/** Sections whose stored result could not be rendered (the run still goes on, and exits 1). */
const unrendered = new Set<string>();

/**
 * A section's body: the benchmark's tables, or what stopped it. A renderer that throws (on a stored
 * result of an older shape, say) costs its own section, not the benchmarks still to run.
 */
function renderSection(b: Bench, result: unknown, all: ReadonlyMap<string, BenchEntry>): string {
  if (result && typeof result === 'object' && 'error' in result && Object.keys(result).length === 1) {
    const first = String((result as { error: unknown }).error).split('\n')[0];
    return `**The run failed**: ${first} (the whole error is in the results file).`;
  }
  try {
    return b.render(result, all);
  } catch (error) {
    if (!unrendered.has(b.name)) console.error(`orrery bench: the ${b.name} section could not be rendered:`, error);
    unrendered.add(b.name);
    return `**This section could not be rendered** from its stored result: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]} (the figures are in the results file).`;
  }
}

/** The generated part of BENCHMARKS.md: the machine and versions, then a section per benchmark (newest result of each). */
function renderAll(entries: Map<string, { entry: BenchEntry; file: ResultsFile }>): string {
  const all = new Map([...entries].map(([k, v]) => [k, v.entry]));
  const newest = [...entries.values()].sort((a, b) => (a.entry.startedAt < b.entry.startedAt ? 1 : -1))[0];
  const out: string[] = ['## The latest run (generated)', ''];
  if (newest) {
    const m = newest.file.machine;
    out.push(`Machine: ${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB, Linux ${m.kernel}. Versions of the newest run: ${Object.entries(newest.file.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
    out.push('Each section says when it ran and with which settings; `npm run bench NAME` refreshes one. The figures are in `bench/results/<date>.json`; the history of earlier runs, and what changed between them, is below the generated part.', '');
  }
  for (const b of BENCHES) {
    const e = entries.get(b.name);
    out.push(`### ${b.title}`, '');
    if (!e) {
      out.push(`Not measured yet: \`npm run bench ${b.name}\`.`, '');
      continue;
    }
    const settings = Object.entries(e.entry.settings).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ');
    out.push(`_Run ${e.entry.startedAt.slice(0, 16).replace('T', ' ')} UTC${e.entry.orrery ? ` on Orrery ${e.entry.orrery}` : ''}, ${Math.round(e.entry.seconds)} s${settings ? `; ${settings}` : ''}; \`npm run bench ${b.name}\`._`, '');
    out.push(renderSection(b, e.entry.result, all), '');
  }
  return out.join('\n');
}

// `--render`: rewrites the generated part of BENCHMARKS.md from the stored results, running nothing
// (after a change to how a section is written).
if (process.argv[2] === '--render') {
  writeBenchmarksMd(renderAll(newestEntries()));
  console.error(`orrery bench: BENCHMARKS.md rewritten from the stored results${unrendered.size ? `; not rendered: ${[...unrendered].join(', ')}` : ''}`);
  process.exit(unrendered.size ? 1 : 0);
}
const names = process.argv.slice(2);
const unknown = names.filter((x) => !BENCHES.some((b) => b.name === x));
if (unknown.length) {
  console.error(`orrery bench: no benchmark named ${unknown.join(', ')}; the benchmarks: ${BENCHES.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const selected = names.length ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES;
const results = openResults(new Date().toISOString().slice(0, 10));
const t0 = Date.now();
const failed: string[] = [];
/** The kernel's dirty page cache, in MB (/proc/meminfo `Dirty`; 0 where there is none). */
function dirtyMb(): number {
  try {
    const m = /^Dirty:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

for (const b of selected) {
  const settings = b.settings();
  // Writes still to be flushed (a fresh clone's `npm ci` and builds leave hundreds of MB) would be
  // written back while the benchmark runs, beside ZooKeeper's fsyncs: flushed first.
  const dirty = dirtyMb();
  const s0 = Date.now();
  execFileSync('sync');
  const startedAt = new Date();
  console.error(`orrery bench: ${b.name} (${JSON.stringify(settings)}) … (first flushed ${dirty.toFixed(0)} MB of dirty pages in ${((Date.now() - s0) / 1000).toFixed(1)} s)`);
  // A benchmark that fails is recorded with its error (its section says so) and the others still run.
  let result: unknown;
  try {
    result = await b.run(settings);
  } catch (error) {
    failed.push(b.name);
    result = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    console.error(`orrery bench: ${b.name} failed:`, error);
  }
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  results.benches[b.name] = { startedAt: startedAt.toISOString(), seconds, orrery: results.versions.orrery, settings, result };
  const file = saveResults(results);
  const entries = newestEntries();
  writeBenchmarksMd(renderAll(entries));
  console.log(`## ${b.title}\n\n${renderSection(b, result, new Map([...entries].map(([k, v]) => [k, v.entry])))}\n`);
  console.error(`orrery bench: ${b.name} took ${Math.round(seconds)} s; ${file} and BENCHMARKS.md written`);
}
console.error(`orrery bench: ${selected.map((b) => b.name).join(', ')} in ${Math.round((Date.now() - t0) / 60_000)} min${failed.length ? `; failed: ${failed.join(', ')}` : ''}${unrendered.size ? `; not rendered: ${[...unrendered].join(', ')}` : ''}`);
if (failed.length || unrendered.size) process.exitCode = 1;
