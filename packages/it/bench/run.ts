// `npm run bench`: runs every benchmark once and prints Markdown tables for BENCHMARKS.md.
import { cpus, totalmem } from 'node:os';
import { runAllocatorBench } from './allocator-bench.js';

const only = process.argv[2];
console.log(`# Orrery benchmarks — ${new Date().toISOString()}`);
console.log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB\n`);

if (!only || only === 'allocator') {
  console.log('## Allocator: 1,000 jobs × 10 shards × 100 executors (times in ms: p50 (max) of 15 runs after 3 warm-up runs)\n');
  const rows = runAllocatorBench();
  console.log('| strategy | full allocation | one join | one leave | moved on join | moved on leave | max/min load after join | after leave |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.strategy} | ${r.fullMs} | ${r.joinMs} | ${r.leaveMs} | ${r.movedOnJoin} | ${r.movedOnLeave} | ${r.loadAfterJoin} | ${r.loadAfterLeave} |`);
  console.log('');
}
