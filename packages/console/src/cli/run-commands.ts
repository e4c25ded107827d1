/**
 * The CLI's views of what runs: `get shards JOB`, `get runs JOB [--limit N]` and
 * `logs JOB RUN [--stderr] [-f]`, on the same store functions as the console API (store/shards.ts,
 * store/runs.ts). Tables show times in the local zone with its offset; `-o json` keeps epoch ms.
 */
import { StringDecoder } from 'node:string_decoder';
import { OrreryError, type ZkClient } from '@orrery/core';
import { listShards, zonedTime, type ShardsView } from '../store/shards.js';
import { followLog, listRuns, readLog, requireClusterToken, runDirectoryFromZk, type RunView, type RunsClientOptions } from '../store/runs.js';
import { formatTable } from './format.js';

/** Where a command writes. */
interface Out {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The local zone of this process (the `TZ` environment variable, else the system's). */
const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** An instant as `YYYY-MM-DD HH:MM:SS+hh:mm` in the local zone (pure but for the zone). */
export function formatLocalTime(ms: number | null | undefined, timeZone: string = localZone()): string {
  if (ms === null || ms === undefined) return '';
  return zonedTime(ms, timeZone).local.replace('T', ' ');
}

/** A duration in ms as people read it: `850 ms`, `2.1 s`, `3 min 5 s`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A message on one line, cut to `max` characters. */
function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `get shards JOB`: each item's state, owner, run in progress, last outcome and next fire. */
export async function getShardsCommand(zk: ZkClient, namespace: string, job: string, output: 'json' | 'table', out: Out): Promise<ShardsView> {
  const view = await listShards(zk, namespace, job);
  if (output === 'json') {
    out.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return view;
  }
  const zone = localZone();
  const rows = view.items.map((s) => [
    String(s.item),
    s.problem ? `${s.state} (BROKEN)` : s.state,
    s.owner ?? '-',
    s.running ? `${formatLocalTime(s.running.since, zone)}${s.running.executor !== s.owner ? ` on ${s.running.executor}` : ''}` : '',
    s.running ? s.running.runId : s.last?.runId ?? '',
    s.last ? `${s.last.status} ${formatLocalTime(s.last.endedAt, zone)}` : '',
    s.unassigned ? s.unassigned.reason : oneLine(s.last?.message ?? ''),
    s.nextFire ? formatLocalTime(s.nextFire.at, zone) : view.enabled ? '' : '(disabled)',
  ]);
  out.stdout.write(`${formatTable(['ITEM', 'STATE', 'OWNER', 'RUNNING SINCE', 'RUN', 'LAST OUTCOME', 'MESSAGE', 'NEXT FIRE'], rows)}\n`);
  const notes: string[] = [`times in ${zone}`];
  const next = view.items.find((s) => s.nextFire)?.nextFire;
  if (next && next.timeZone !== zone) notes.push(`next fire in the job's zone ${next.timeZone}: ${next.local.replace('T', ' ')}`);
  out.stdout.write(`(${notes.join('; ')})\n`);
  for (const s of view.items) {
    if (s.unassigned) out.stdout.write(`item ${s.item} is unassigned (${s.unassigned.reason}): ${s.unassigned.advice}\n`);
    if (s.failoverPending) out.stdout.write(`item ${s.item}: run ${s.failoverPending.runId} crashed on ${s.failoverPending.executor} and waits for its failover re-run\n`);
    if (s.problem) out.stdout.write(`item ${s.item}: its shard node is ${s.problem}\n`);
  }
  if (view.assignmentProblem) out.stderr.write(`warning: the job's assignment node is ${view.assignmentProblem}\n`);
  return view;
}

/** `get runs JOB [--limit N]`: merged from every executor; those that could not be asked go to stderr. */
export async function getRunsCommand(zk: ZkClient, namespace: string, job: string, limit: number | undefined, output: 'json' | 'table', client: RunsClientOptions, out: Out): Promise<void> {
  requireClusterToken(client);
  const listing = await listRuns(runDirectoryFromZk(zk, namespace), job, limit !== undefined ? { limit } : {}, client);
  if (output === 'json') out.stdout.write(`${JSON.stringify(listing, null, 2)}\n`);
  else {
    const zone = localZone();
    const rows = listing.runs.map((r) => [r.runId, String(r.item), r.status, formatLocalTime(r.startedAt, zone), formatDuration(r.durationMs), r.executor, r.trigger ?? '', oneLine(r.message)]);
    out.stdout.write(`${formatTable(['RUN', 'ITEM', 'STATUS', 'STARTED', 'DURATION', 'EXECUTOR', 'TRIGGER', 'MESSAGE'], rows)}\n`);
    out.stdout.write(`(times in ${zone}${listing.nextBefore !== null ? `; more: the API's ?before=${listing.nextBefore}` : ''})\n`);
  }
  for (const u of listing.unavailable) out.stderr.write(`warning: runs of executor '${u.executor}' are missing (${u.reason}): ${u.message}\n`);
}

/** A run's outcome as one line. */
export function describeOutcome(run: RunView): string {
  const exit = run.exitCode !== null ? ` (exit ${run.exitCode})` : '';
  return `run ${run.runId} ${run.status}${exit} after ${formatDuration(run.durationMs)} on executor ${run.executor}${run.message ? `: ${oneLine(run.message, 200)}` : ''}`;
}

/**
 * `logs JOB RUN [--stderr] [-f]`: prints the log; `follow` tails a running one until it ends, then
 * prints the outcome (on stderr, so stdout holds only the log). Resolves with the exit code.
 */
export async function logsCommand(zk: ZkClient, namespace: string, job: string, runId: string, options: { stderr: boolean; follow: boolean; signal?: AbortSignal }, client: RunsClientOptions, out: Out): Promise<number> {
  requireClusterToken(client);
  const directory = runDirectoryFromZk(zk, namespace);
  const stream = options.stderr ? 'stderr' : 'stdout';
  if (!options.follow) {
    const log = await readLog(directory, job, runId, { stream }, client);
    const decoder = new StringDecoder('utf8');
    if (log.body) for await (const chunk of log.body) out.stdout.write(decoder.write(chunk as Buffer));
    const rest = decoder.end();
    if (rest) out.stdout.write(rest);
    if (log.run.status === 'running') out.stderr.write(`(run ${runId} is still running on ${log.executor}: add -f to follow it)\n`);
    return 0;
  }
  for await (const event of followLog(directory, job, runId, { stream, ...(options.signal ? { signal: options.signal } : {}) }, client)) {
    switch (event.type) {
      case 'log':
        out.stdout.write(event.text);
        break;
      case 'end':
        out.stderr.write(`${describeOutcome(event.run)}\n`);
        return 0;
      case 'expired':
        throw new OrreryError('not-found', event.message, { details: { runId, reason: 'expired' } });
      case 'executor-offline':
        throw new OrreryError('unavailable', event.message, { details: { runId, executor: event.executor, reason: 'executor-offline' } });
    }
  }
  return 0;
}

/** Value-taking options of the CLI (to find the command word in argv). */
const VALUE_OPTIONS = new Set(['--zk', '--root', '--zk-auth-file', '-n', '--namespace', '-f', '--file', '-o', '--output', '--description', '--webhook', '--items', '--param', '--limit']);

/**
 * `-f` means `--file` everywhere but after `logs`, where it means `--follow` (as `tail -f`): this
 * rewrites it there (pure).
 */
export function rewriteFollowFlag(argv: readonly string[]): string[] {
  const args = [...argv];
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') return args;
    if (a.startsWith('-')) {
      i += VALUE_OPTIONS.has(a) ? 2 : 1;
      continue;
    }
    if (a !== 'logs') return args;
    for (let j = i + 1; j < args.length; j += 1) if (args[j] === '-f') args[j] = '--follow';
    return args;
  }
  return args;
}
