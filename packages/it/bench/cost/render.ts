/**
 * Markdown for BENCHMARKS.md from a cost bench result: the settings line, one table per curve
 * (cost per run) and one (cores busy), then the reading — the knee of each curve and what
 * saturated there, worked out from the figures (no text is fixed in advance).
 */
import type { CostBenchResult, CostCurve, CostStep } from '../cost-bench.js';

const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en') : '—');
const dec = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : '—');
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
    '| runs/s asked | busiest event loop | executors | workers | allocator | ZooKeeper | machine busy (of cores) | other |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const s of curve.steps) {
    const c = s.cores;
    rows.push(`| ${int(s.rateAsked)} | ${pct(c.busiestEventLoop)} | ${dec(c.executor)} | ${dec(c.workers)} | ${dec(c.allocator)} | ${dec(c.zookeeper)} | ${dec(c.machineBusy)} (of ${dec(c.machineCores, 1)}) | ${dec(c.other)} |`);
  }
  return rows;
}

/** Orrery's CPU seconds per run, all its processes. */
const totalMsPerRun = (s: CostStep): number => s.cpuMsPerRun.executor + s.cpuMsPerRun.workers + s.cpuMsPerRun.allocator + s.cpuMsPerRun.zookeeper;

/** What saturated at a step, from its core figures. */
function saturation(s: CostStep): string {
  const c = s.cores;
  const parts: string[] = [];
  if (c.busiestEventLoop >= SATURATED) parts.push(`the executor's event loop (its main thread busy ${pct(c.busiestEventLoop)} of a core)`);
  if (c.machineBusy >= SATURATED * c.machineCores) {
    parts.push(`the machine's ${dec(c.machineCores, 0)} cores (${dec(c.machineBusy)} busy: executors ${dec(c.executor)}, workers ${dec(c.workers)}, ZooKeeper ${dec(c.zookeeper)}, allocator ${dec(c.allocator)}, other ${dec(c.other)})`);
  }
  if (parts.length > 0) return `saturated: ${parts.join('; and ')}`;
  return `no CPU saturated (machine ${dec(c.machineBusy)} of ${dec(c.machineCores, 1)} cores busy, busiest event loop ${pct(c.busiestEventLoop)}): the limit is not CPU time but waiting (ZooKeeper round trips or the worker hand-off)`;
}

function curveReading(curve: CostCurve, cores: number): string {
  const name = curve.executors === 1 ? '1 executor' : `${curve.executors} executors`;
  const held = curve.steps.filter((s) => !s.brokeDown);
  const broke = curve.steps.find((s) => s.brokeDown);
  const last = held.at(-1);
  const ceiling = last ? (cores * 1000) / totalMsPerRun(last) : NaN;
  const cost = last ? ` At ${int(last.rateAsked)} runs/s Orrery spent ${dec(totalMsPerRun(last), 3)} ms of CPU per run in all its processes, so ${cores} cores carry at most ≈ ${int(ceiling)} runs/s.` : '';
  if (!broke) {
    return `- **${name}**: held every step up to ${int(last?.rateAsked ?? NaN)} runs/s (p99 ${int(last?.lateness.p99 ?? NaN)} ms): the knee is above the rates tried; at the top step ${last ? saturation(last) : '—'}.${cost}`;
  }
  const before = last ? `held up to ${int(last.rateAsked)} runs/s (p99 ${int(last.lateness.p99)} ms, ${pct(last.missedFraction)} missed)` : 'did not hold even the first step';
  return `- **${name}**: ${before}; broke down at ${int(broke.rateAsked)} runs/s (${broke.breakdown.join('; ')}; achieved ${int(broke.achievedPerSecond)}/s). There ${saturation(broke)}.${cost}`;
}

function zkReading(result: CostBenchResult): string {
  const steps = result.curves.flatMap((c) => c.steps.filter((s) => !s.brokeDown));
  if (steps.length === 0) return '- ZooKeeper per run: no step held, so no steady figure.';
  const tx = steps.map((s) => s.zookeeper.transactionsPerRun).filter(Number.isFinite);
  const bytes = steps.map((s) => s.zookeeper.logBytesPerRun).filter(Number.isFinite);
  const mismatch = steps.filter((s) => s.zookeeper.logRecords !== s.zookeeper.transactions).length;
  const snaps = steps.reduce((n, s) => n + s.zookeeper.snapshotsWritten, 0);
  return `- ZooKeeper per run, over the steps that held: ${dec(Math.min(...tx))}–${dec(Math.max(...tx))} transactions (target ≤ 2: ${Math.max(...tx) <= 2.005 ? 'met' : 'not met'}), ${int(Math.min(...bytes))}–${int(Math.max(...bytes))} bytes appended to the transaction log; ${snaps} snapshot${snaps === 1 ? '' : 's'} written in those windows${mismatch > 0 ? `; in ${mismatch} step(s) the log's records differ from the Zxid delta (a record being written at a sample)` : ''}.`;
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
    out.push('Cores busy in the window (CPU seconds per second; "other" is the machine\'s busy time outside Orrery\'s processes: this bench\'s runner and anything else running):', '');
    out.push(...coresTable(curve), '');
  }
  out.push('Node no-op jobs are the coordination-bound case: the job does nothing, so every figure is Orrery\'s own cost per run — the claim and the completion in ZooKeeper, the hand-off to a Node worker, the run record on the executor\'s disk.');
  for (const curve of result.curves) out.push(curveReading(curve, result.machine.cores));
  out.push(zkReading(result));
  return out.join('\n');
}
