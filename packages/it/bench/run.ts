// `npm run bench`: runs every benchmark once and prints Markdown tables for BENCHMARKS.md.
import { cpus, totalmem } from 'node:os';
import { runAllocatorBench, runMixedAllocatorBench } from './allocator-bench.js';
import { CONSOLE_BENCH_CONNECTIONS, runConsoleBench } from './console-bench.js';
import { EXECUTOR_BENCH_PARTS, SHELL_FLOOR_RATIO_TARGET, runExecutorBench, type ExecutorBenchPart } from './executor-bench.js';
import { runFailoverBench } from './failover-bench.js';

const only = process.argv[2];
console.log(`# Orrery benchmarks — ${new Date().toISOString()}`);
console.log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB\n`);

if (!only || only === 'allocator') {
  console.log('## Allocator: 1,000 jobs × 10 shards × 100 executors (times in ms: p50 (max) of 15 runs after 3 warm-up runs)\n');
  const rows = runAllocatorBench();
  console.log('| strategy | full allocation | one join | one leave | moved on join | moved on leave | max/min load after join | after leave | per-job spread full/join/leave |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.strategy} | ${r.fullMs} | ${r.joinMs} | ${r.leaveMs} | ${r.movedOnJoin} | ${r.movedOnLeave} | ${r.loadAfterJoin} | ${r.loadAfterLeave} | ${r.spread} |`);
  console.log('\n### Mixed: 200 jobs of 1–60 shards, loadLevel 1–3, 20 executors\n');
  console.log('| strategy | per-job spread full/join/leave | max − min load full/join/leave | moved on join | moved on leave |');
  console.log('|---|---|---|---|---|');
  for (const r of runMixedAllocatorBench()) console.log(`| ${r.strategy} | ${r.spread} | ${r.loadGap} | ${r.movedOnJoin} | ${r.movedOnLeave} |`);
  console.log('');
}

if (!only || only === 'executor') {
  const seconds = Number(process.env.ORRERY_BENCH_SECONDS ?? 60);
  console.log(`## Executor: fire lateness, every job on \`* * * * * *\`, one executor, ${seconds} s of steady state per scenario (from the first two fires in a row that ran for every job)\n`);
  // ORRERY_BENCH_EXECUTOR=shell (or node,idle,tx — a comma list): only those parts; the floor always.
  const parts = (process.env.ORRERY_BENCH_EXECUTOR ?? EXECUTOR_BENCH_PARTS.join(',')).split(',').map((p) => p.trim()).filter((p): p is ExecutorBenchPart => (EXECUTOR_BENCH_PARTS as readonly string[]).includes(p));
  const r = await runExecutorBench(seconds, parts);
  const ms = (v: number) => `${Math.round(v)}`;
  console.log('| scenario | lateness p50 / p99 / max (ms) | runs | missed | duplicates | not succeeded | start-up: s until steady, fires missed meanwhile |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of r.rows) console.log(`| ${row.scenario} | ${ms(row.lateness.p50)} / ${ms(row.lateness.p99)} / ${ms(row.lateness.max)} | ${row.runs} | ${row.missed} | ${row.duplicates} | ${row.failed} | ${row.startupSeconds} s, ${row.startupMissed} |`);
  console.log(`\nSpawn floor (this Node spawning 100 \`sh -c 'exit 0'\` at once, ms from the burst to each spawn, ${r.floor.count} spawns): p50 ${r.floor.p50.toFixed(1)}, p99 ${r.floor.p99.toFixed(1)}, max ${r.floor.max.toFixed(1)}.`);
  if (r.shellFloorRatio !== undefined) console.log(`Shell p99 ÷ floor p99 = ${r.shellFloorRatio.toFixed(2)} (target ≤ ${SHELL_FLOOR_RATIO_TARGET}).`);
  if (r.idle) console.log(`Idle executor with ${r.idle.jobs} jobs, ${r.idle.seconds.toFixed(0)} s after they were applied: RSS ${r.idle.rssMb.toFixed(0)} MB (peak ${r.idle.peakRssMb.toFixed(0)} MB in that time), CPU ${r.idle.cpuPercent.toFixed(1)} %.`);
  if (r.tx) console.log(`ZooKeeper transactions per shard run: ${r.tx.transactions} transactions for ${r.tx.runs} runs = ${r.tx.perRun.toFixed(2)} per run (Zxid delta from srvr).`);
  console.log('');
}

if (!only || only === 'failover') {
  const trials = Number(process.env.ORRERY_BENCH_TRIALS ?? 20);
  console.log(`## Failover: kill -9 of the executor running a shard, until its re-run starts on a survivor (${trials} trials per row)\n`);
  const r = await runFailoverBench(trials);
  const d = (x: { p50: number; p99: number; max: number }) => `${Math.round(x.p50)} / ${Math.round(x.p99)} / ${Math.round(x.max)}`;
  console.log(`ZooKeeper tickTime ${r.tickMs} ms. Times in ms, p50 / p99 / max.\n`);
  console.log('| kill -9 of | session timeout | trials | failover (kill → re-run start) | detection (→ session ended) | reassignment (→ applied moved) | start (→ re-run started) | overlaps |');
  console.log('|---|---|---|---|---|---|---|---|');
  const killed = { process: 'the executor process alone (its guard closes the session)', host: 'the executor, its guard and its job (host-loss-like: the session expires)' };
  for (const row of r.rows) console.log(`| ${killed[row.kill]} | ${row.sessionSeconds} s | ${row.trials} | ${d(row.total)} | ${d(row.detection)} | ${d(row.reassignment)} | ${d(row.start)} | ${row.overlaps} |`);
  console.log(`\nGraceful shutdown handoff (SIGTERM → applied gives the leaver's idle shards away), ${r.handoff.trials} trials: p50 ${Math.round(r.handoff.handoff.p50)}, p99 ${Math.round(r.handoff.handoff.p99)}, max ${Math.round(r.handoff.handoff.max)} ms.`);
  console.log('');
}

if (!only || only === 'console') {
  const seconds = Number(process.env.ORRERY_BENCH_SECONDS ?? 20);
  const r = await runConsoleBench(seconds, process.env.ORRERY_BENCH_CPU_PROF || undefined);
  console.log(`## Console: ${r.jobs.toLocaleString('en')} jobs in a namespace, ${CONSOLE_BENCH_CONNECTIONS} concurrent clients (autocannon), ${seconds} s per route after a 5 s warm-up\n`);
  console.log(`${r.nodes.toLocaleString('en')} nodes written in ${r.writeSeconds.toFixed(1)} s; the console healthy (cache loaded) ${r.consoleStartSeconds.toFixed(1)} s after its spawn. Latency in ms.\n`);
  console.log('| route | p50 / p99 / max (ms) | requests/s | requests | failed | console CPU | ZooKeeper packets (all / console session) | ZooKeeper requests per GET |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(`| idle baseline, ${seconds} s | | | | | | ${r.idle.zkPackets} / ${r.idle.consoleSessionPackets ?? '?'} | |`);
  for (const row of r.rows) {
    console.log(`| ${row.route} | ${row.p50} / ${row.p99} / ${row.max} | ${Math.round(row.requestsPerSecond)} | ${row.requests} | ${row.failed} | ${Math.round(row.consoleCpuPercent)} % | ${row.zkPackets} / ${row.consoleSessionPackets ?? '?'} | ${row.zkRequestsPerGet.toFixed(4)} |`);
  }
  console.log(`\nConsole RSS: ${r.rss.loadedMb.toFixed(0)} MB loaded and idle for ${seconds} s, ${r.rss.afterMb.toFixed(0)} MB ${seconds} s after the load, peak ${r.rss.peakMb.toFixed(0)} MB (VmHWM).`);
  if (r.ui && 'error' in r.ui) {
    console.log(`\nThe UI's jobs page: the measurement failed: ${r.ui.error}`);
  } else if (r.ui) {
    const v = r.ui.visits;
    console.log(`\nThe UI's jobs page in headless Chromium (1400 × 900), ${r.ui.jobs.toLocaleString('en')} jobs, ${v.length} visits: interactive (rows shown, search usable) ${v.map((x) => x.interactiveMs).join(' / ')} ms after the navigation started.`);
    console.log(`Scrolling from the first job to the last, 600 px a frame (the page fetching 500 more as the end nears): ${(r.ui.scroll.totalMs / 1000).toFixed(1)} s, ${r.ui.scroll.frames} frames, frame interval p50 ${r.ui.scroll.p50.toFixed(1)} / p99 ${r.ui.scroll.p99.toFixed(1)} / max ${r.ui.scroll.max.toFixed(1)} ms, ${r.ui.scroll.over50ms} frames over 50 ms.`);
  } else {
    console.log('\nThe UI\'s jobs page: not measured (Chromium is not installed: `npm test` installs it).');
  }
  console.log('');
}
