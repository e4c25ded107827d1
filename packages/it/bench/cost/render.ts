/**
 * Markdown for BENCHMARKS.md from a cost bench result: the settings line, one table per curve
 * (cost per run) and one (cores busy), then the reading — the knee of each curve and what
 * saturated there, worked out from the figures (no text is fixed in advance).
 */
import type { CostBenchResult, CostCurve, CostStep } from '../cost-bench.js';
import type { WindowTransactions } from './zk-ledger.js';

const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en') : '—');
const dec = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : '—');
/** "Other" is a difference of two clocks read a few ms apart: within ±0.05 cores it is noise. */
const other = (v: number): string => (Math.abs(v) < 0.05 ? '≈ 0' : dec(v));
const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(v > 0 && v < 0.001 ? 3 : 1)} %` : '—');

/** A busy share from which a part counts as saturated: of one core for an event loop, of all cores for the machine. */
const SATURATED = 0.85;

function costTable(curve: CostCurve): string[] {
  const rows = [
    '| runs/s asked | achieved | lateness p50 / p99 / max (ms) | missed | CPU ms per run: executor / its workers / allocator / ZooKeeper | ZK txns per run | ZK bytes per run: log / snapshots |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const s of curve.steps) {
    const c = s.cpuMsPerRun;
    const mark = s.brokeDown ? ' ✗' : '';
    rows.push(`| ${int(s.rateAsked)}${mark} | ${int(s.achievedPerSecond)} | ${int(s.lateness.p50)} / ${int(s.lateness.p99)} / ${int(s.lateness.max)} | ${pct(s.missedFraction)} | ${dec(c.executor, 3)} / ${dec(c.workers, 3)} / ${dec(c.allocator, 3)} / ${dec(c.zookeeper, 3)} | ${dec(s.zookeeper.transactionsPerRun)} | ${int(s.zookeeper.logBytesPerRun)} / ${int(s.zookeeper.snapshotBytesPerRun)} |`);
  }
  return rows;
}

function coresTable(curve: CostCurve): string[] {
  const rows = [
    '| runs/s asked | busiest event loop | executors | workers | allocator | ZooKeeper | bench runner | other | machine busy (of cores) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of curve.steps) {
    const c = s.cores;
    rows.push(`| ${int(s.rateAsked)} | ${pct(c.busiestEventLoop)} | ${dec(c.executor)} | ${dec(c.workers)} | ${dec(c.allocator)} | ${dec(c.zookeeper)} | ${dec(c.runner)} | ${other(c.other)} | ${dec(c.machineBusy)} (of ${dec(c.machineCores, 1)}) |`);
  }
  return rows;
}

/** Cores of "other" (not Orrery, not the runner) from which a window counts as shared with other work. */
const SHARED = 0.25;

/** What each reason of a skipped fire means (the executor's `fire:skipped` reasons). */
const SKIP_MEANING: Record<string, string> = {
  'overlap-skipped': 'the shard\'s previous run was still in progress — claimed, waiting for a worker or running — at the next fire time',
  misfire: 'the fire could no longer start on time (policy skip: more than a second late)',
  'not-connected': 'no ZooKeeper session at the fire',
  unreadable: 'an executor\'s /metrics did not answer at a sample',
};

const notRun = (s: CostStep): string => {
  const e = Object.entries(s.notRun);
  const meaning = (k: string): string => (SKIP_MEANING[k] ? ` (${SKIP_MEANING[k]})` : '');
  return e.length === 0 ? 'no fire skipped by the executors' : `fires the executors skipped: ${e.map(([k, v]) => `${int(v)} ${k}${meaning(k)}`).join(', ')}`;
};

/** Orrery's CPU seconds per run, all its processes. */
const totalMsPerRun = (s: CostStep): number => s.cpuMsPerRun.executor + s.cpuMsPerRun.workers + s.cpuMsPerRun.allocator + s.cpuMsPerRun.zookeeper;

/** How busy a step that held kept the cores. */
function load(s: CostStep): string {
  const c = s.cores;
  const shared = c.other >= SHARED ? ` (other processes on the machine: ${dec(c.other)})` : '';
  return `the machine was ${dec(c.machineBusy)} of ${dec(c.machineCores, 1)} cores busy${shared}, the busiest event loop ${pct(c.busiestEventLoop)} of a core`;
}

/** Orrery's cores (all its processes) at a step. */
const orreryCores = (s: CostStep): number => s.cores.executor + s.cores.workers + s.cores.allocator + s.cores.zookeeper;

/**
 * Orrery's CPU as a line through the two highest steps that held — a fixed part (pings, timers)
 * plus a marginal cost per run — and where that line reaches the machine's cores.
 */
function extrapolation(held: readonly CostStep[], cores: number): string {
  const last = held.at(-1);
  if (!last) return '';
  const at = ` At ${int(last.rateAsked)} runs/s Orrery spent ${dec(totalMsPerRun(last), 3)} ms of CPU per run in all its processes.`;
  const prev = held.at(-2);
  if (!prev) return at;
  const marginal = (orreryCores(last) - orreryCores(prev)) / (last.achievedPerSecond - prev.achievedPerSecond);
  if (!(marginal > 0)) return at;
  const fixed = orreryCores(last) - marginal * last.achievedPerSecond;
  const reach = (cores - fixed) / marginal;
  return `${at} Through the two highest steps its CPU is a line of ${dec(fixed)} cores fixed plus ${dec(marginal * 1000, 3)} ms per run: Orrery alone would fill the machine's ${cores} cores at ≈ ${int(reach)} runs/s.`;
}

/** What saturated at a step, from its core figures. */
function saturation(s: CostStep): string {
  const c = s.cores;
  const loop = c.busiestEventLoop >= SATURATED ? 'saturated' : c.busiestEventLoop >= 0.5 ? 'near saturation, as its work comes in one burst per fire' : 'not saturated';
  const machine = c.machineBusy >= SATURATED * c.machineCores ? 'saturated' : 'not saturated';
  const shared = c.other >= SHARED ? `; other processes on the machine took ${dec(c.other)} cores then, so this knee is lower than a quiet machine's` : '';
  const verdict = loop === 'not saturated' && machine === 'not saturated'
    ? ': no CPU was saturated, so the limit is waiting (ZooKeeper round trips, the worker hand-off), not CPU time'
    : '';
  return `the busiest executor's event loop was busy ${pct(c.busiestEventLoop)} of a core (${loop}); the machine's ${dec(c.machineCores, 0)} cores ${dec(c.machineBusy)} busy (${machine}: executors ${dec(c.executor)}, workers ${dec(c.workers)}, ZooKeeper ${dec(c.zookeeper)}, allocator ${dec(c.allocator)}, other ${other(c.other)})${verdict}${shared}`;
}

function curveReading(curve: CostCurve, cores: number): string {
  const name = curve.executors === 1 ? '1 executor' : `${curve.executors} executors`;
  const held = curve.steps.filter((s) => !s.brokeDown);
  const broke = curve.steps.find((s) => s.brokeDown);
  const last = held.at(-1);
  const cost = extrapolation(held, cores);
  if (!broke) {
    return `- **${name}**: held every step up to ${int(last?.rateAsked ?? NaN)} runs/s (p99 ${int(last?.lateness.p99 ?? NaN)} ms): the knee is above the rates tried; at the top step ${last ? load(last) : '—'}.${cost}`;
  }
  const before = last ? `held up to ${int(last.rateAsked)} runs/s (p99 ${int(last.lateness.p99)} ms, ${pct(last.missedFraction)} missed)` : 'did not hold even the first step';
  return `- **${name}**: ${before}; broke down at ${int(broke.rateAsked)} runs/s (${broke.breakdown.join('; ')}; achieved ${int(broke.achievedPerSecond)}/s; ${notRun(broke)}). There ${saturation(broke)}.${cost}`;
}

/** The curves side by side at the highest rate all of them held. */
function comparison(curves: readonly CostCurve[]): string | undefined {
  if (curves.length < 2) return undefined;
  const rates = curves.map((c) => new Set(c.steps.filter((s) => !s.brokeDown).map((s) => s.rateAsked)));
  const common = [...rates[0]!].filter((r) => rates.every((set) => set.has(r))).sort((a, b) => a - b).at(-1);
  if (common === undefined) return undefined;
  const at = curves.map((c) => ({ c, s: c.steps.find((s) => s.rateAsked === common)! }));
  const list = at.map(({ c, s }) => `${c.executors} executor${c.executors === 1 ? '' : 's'}: ${dec(totalMsPerRun(s), 3)} ms (executor processes ${dec(s.cpuMsPerRun.executor, 3)}, their busiest event loop ${pct(s.cores.busiestEventLoop)} of a core)`).join('; ');
  return `- At ${int(common)} runs/s, the highest rate every curve held, Orrery's CPU per run was ${list}. Several executors spread the event-loop work, but on one machine they share its cores, and each carries a fixed cost of its own.`;
}

/** The lowest and highest of some figures as written (one figure when they read the same). */
function span(values: readonly number[], show: (v: number) => string): string {
  const [lo, hi] = [show(Math.min(...values)), show(Math.max(...values))];
  return lo === hi ? lo : `${lo}–${hi}`;
}

function zkReading(result: CostBenchResult): string {
  const steps = result.curves.flatMap((c) => c.steps.filter((s) => !s.brokeDown));
  if (steps.length === 0) return '- ZooKeeper per run: no step held, so no steady figure.';
  const tx = steps.map((s) => s.zookeeper.transactionsPerRun).filter(Number.isFinite);
  const bytes = steps.map((s) => s.zookeeper.logBytesPerRun).filter(Number.isFinite);
  const mismatch = steps.filter((s) => s.zookeeper.logRecords !== s.zookeeper.transactions).length;
  const snaps = steps.reduce((n, s) => n + s.zookeeper.snapshotsWritten, 0);
  // What the transactions were for (results written before it was counted lack it).
  const windows = steps.map((s) => s.zookeeper.window).filter((w): w is WindowTransactions => w !== undefined);
  const sum = (f: (w: WindowTransactions) => number): number => windows.reduce((n, w) => n + f(w), 0);
  const runs = steps.reduce((n, s) => n + s.runs, 0);
  const parts: string[] = [];
  if (windows.length === steps.length) {
    parts.push(`${int(sum((w) => w.claims))} claims and ${int(sum((w) => w.completions))} completions for ${int(runs)} runs`);
    if (sum((w) => w.otherShardWrites) > 0) parts.push(`${int(sum((w) => w.otherShardWrites))} other writes of their shards (failover markings)`);
    parts.push(`${int(sum((w) => w.other))} other transaction${sum((w) => w.other) === 1 ? '' : 's'} in the windows`);
  }
  const edge = sum((w) => w.edge);
  return `- ZooKeeper per run, over the steps that held: ${span(tx, dec)} transactions (target ≤ 2 per run: ${Math.max(...tx) <= 2.005 ? 'met' : 'not met'})${parts.length > 0 ? ` — ${parts.join(', ')}` : ''}${edge > 0 ? `; not counted, ${int(edge)} writes in the sampled intervals that belong to the fires just before or after a window` : ''}; ${span(bytes, int)} bytes appended to the transaction log; ${snaps} snapshot${snaps === 1 ? '' : 's'} written in those windows${mismatch > 0 ? `; in ${mismatch} step(s) the log's records differ from the Zxid delta (a record being written at a sample)` : ''}.`;
}

function integrity(result: CostBenchResult): string {
  const steps = result.curves.flatMap((c) => c.steps);
  const sum = (f: (s: CostStep) => number): number => steps.reduce((n, s) => n + f(s), 0);
  const unsteady = steps.filter((s) => !s.steady).map((s) => `${int(s.rateAsked)}/s on ${s.runsPerExecutor.length}`);
  const spread = result.curves.filter((c) => c.executors > 1).flatMap((c) => c.steps.filter((s) => !s.brokeDown).map((s) => Math.max(...s.runsPerExecutor) / Math.max(1, Math.min(...s.runsPerExecutor))));
  return `- In all ${steps.length} steps: ${int(sum((s) => s.duplicates))} duplicate runs, ${int(sum((s) => s.failed))} runs not succeeded${unsteady.length > 0 ? `; not steady within the bound (measured anyway): ${unsteady.join(', ')}` : '; every window began after two complete fires'}${spread.length > 0 ? `; with several executors, in the steps that held, the busiest ran at most ${dec(Math.max(...spread))} × the runs of the least busy` : ''}.`;
}

/** Markdown for BENCHMARKS.md (no heading): settings, the tables of each curve, the reading. */
export function renderCost(result: CostBenchResult): string {
  const s = result.settings;
  const out: string[] = [
    `Node no-op jobs (handler \`noop\`) on \`* * * * * *\`, ${s.shardsPerJob} shards per job, runs/s = jobs × shards; ${s.nodeWorkers} Node workers over the executors of a curve; ZooKeeper ${s.zooKeeper}; ${s.windowSeconds} s of fires measured per step once two fires in a row ran every shard (at most ${s.steadyTimeoutSeconds} s); a step breaks down (✗) at lateness p99 > ${s.latenessP99LimitMs} ms or > ${s.missedLimit * 100} % missed, and ends its curve. ${result.machine.cores} × ${result.machine.model}; ${int(result.seconds)} s in all.`,
    '',
  ];
  for (const curve of result.curves) {
    out.push(`**${curve.executors === 1 ? '1 executor' : `${curve.executors} executors sharing one ZooKeeper`}** (\`--node-workers ${curve.nodeWorkersPerExecutor}\` each). Cost per run:`, '');
    out.push(...costTable(curve), '');
    if (curve.error) out.push(`The curve ended on an error after ${curve.steps.length} step(s): ${curve.error.split('\n')[0]}`, '');
    out.push('Cores busy in the window (CPU seconds per second; "other" is the machine\'s busy time outside Orrery\'s processes and this bench\'s runner: anything else running on the machine):', '');
    out.push(...coresTable(curve), '');
  }
  out.push('Node no-op jobs are the coordination-bound case: the job does nothing, so every figure is Orrery\'s own cost per run — the claim and the completion in ZooKeeper, the hand-off to a Node worker, the run record on the executor\'s disk.');
  for (const curve of result.curves) out.push(curveReading(curve, result.machine.cores));
  const compared = comparison(result.curves);
  if (compared) out.push(compared);
  out.push(zkReading(result));
  out.push(integrity(result));
  return out.join('\n');
}
