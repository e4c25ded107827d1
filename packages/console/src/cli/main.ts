/**
 * The `orrery` admin CLI. It talks to ZooKeeper directly through @orrery/core (no server needed).
 * Exit codes: 0 ok, 1 failure, 2 usage. Errors go to stderr and name the field and the rule.
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { hasErrorCode, OrreryError, createZkClient, describeZkSource, resolveZkAuth, resolveZkConnect, toError, ORRERY_VERSION, type ZkClient, type ValidationIssue } from '@orrery/core';
import { createNamespace, deleteNamespace, listNamespaces } from '../store/namespaces.js';
import { applyPlan, deleteJob, listJobs, planJobs, readJob, runJobNow, setJobEnabled, stopJob, validateJobDocument, type JobDocumentEntry, type JobWriteOptions } from '../store/jobs.js';
import { listAssignments, listExecutors, requestReshard, setNoTraffic } from '../store/executors.js';
import { fromSaturnExport } from '../store/saturn-import.js';
import { secureTree } from '../store/acl.js';
import { formatTable, formatValue } from './format.js';
import { getRunsCommand, getShardsCommand, logsCommand, rewriteFollowFlag } from './run-commands.js';

/** Where the CLI reads and writes; the bin passes the process's, tests their own. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Readonly<Record<string, string | undefined>>;
}

export const USAGE = `Usage: orrery [--zk HOST:PORT] [--root PATH] [-n NAMESPACE] COMMAND

Namespaces:
  orrery ns create NAME [--description TEXT] [--webhook URL]
  orrery ns list [-o json|table]
  orrery ns delete NAME [--force]

Jobs (need -n NAMESPACE):
  orrery -n NS apply -f FILE [--dry-run]      create or update the jobs in FILE (YAML or JSON: {jobs: [...]})
  orrery -n NS import-saturn FILE [--dry-run] import Saturn's shell jobs from a JSON export (shows the diff; imported disabled)
  orrery -n NS get jobs|job NAME|executors|assignment [-o json|table]
  orrery -n NS enable|disable JOB
  orrery -n NS delete JOB [--force]
  orrery -n NS run JOB [--items 0,2] [--param X]   run now (the owners act within a second)
  orrery -n NS stop JOB [--items 0,2]              stop runs in progress

Shards, runs and logs (need -n NAMESPACE; runs and logs need ORRERY_CLUSTER_TOKEN):
  orrery -n NS get shards JOB                 each item: state, owner, running since, last outcome, next fire
  orrery -n NS get runs JOB [--limit N]       runs merged from every executor, newest first (default 50);
                                             executors that cannot be asked are named on stderr
  orrery -n NS logs JOB RUN [--stderr] [-f]   print a run's log; -f follows a running one until it ends
                                             and prints its outcome (on stderr)

ZooKeeper access:
  orrery acl secure                          give every node of the tree the ACL of ORRERY_ZK_AUTH
                                             (an existing tree, once authentication is turned on)

Executors and sharding (need -n NAMESPACE):
  orrery -n NS drain|undrain EXECUTOR        stop / resume giving the executor shards (noTraffic)
  orrery -n NS reshard [JOB]                 ask the allocator for a rebalancing round

Options:
  --zk HOST:PORT[,HOST:PORT…]   ZooKeeper (default: env ORRERY_ZK, else npm start's local one, else 127.0.0.1:2181)
  --root PATH                   Orrery's root in ZooKeeper (default: env ORRERY_ROOT, else /orrery)
  --zk-auth-file FILE           ZooKeeper digest credentials USER:PASSWORD in a file (default: env ORRERY_ZK_AUTH)
  -n, --namespace NS            the namespace to work in
  -o, --output json|table       output format (default table)
  -h, --help                    this help;  --version  the version

Environment: ORRERY_CLUSTER_TOKEN — the executors' cluster token: get runs and logs read the run
history from the executors' HTTP API with it. Tables show times in the local zone (TZ); -o json
keeps epoch milliseconds.

Exit codes: 0 ok, 1 failure, 2 usage.
`;

class UsageError extends Error {}

const OPTIONS = {
  zk: { type: 'string' },
  root: { type: 'string' },
  'zk-auth-file': { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  file: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  'dry-run': { type: 'boolean' },
  force: { type: 'boolean' },
  description: { type: 'string' },
  webhook: { type: 'string' },
  items: { type: 'string' },
  param: { type: 'string' },
  limit: { type: 'string' },
  stderr: { type: 'boolean' },
  follow: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: rewriteFollowFlag(argv), options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (error) {
    io.stderr.write(`error: ${toError(error).message}\n${HELP_HINT}`);
    return 2;
  }
  if (values.version) {
    io.stdout.write(`${ORRERY_VERSION}\n`);
    return 0;
  }
  if (values.help || positionals.length === 0 || positionals[0] === 'help') {
    (values.help || positionals[0] === 'help' ? io.stdout : io.stderr).write(USAGE);
    return values.help || positionals[0] === 'help' ? 0 : 2;
  }
  const output = values.output ?? 'table';
  if (output !== 'json' && output !== 'table') {
    io.stderr.write(`error: -o/--output must be 'json' or 'table' (got '${output}')\n`);
    return 2;
  }

  let auth: string | undefined;
  try {
    auth = resolveZkAuth(values['zk-auth-file'], io.env);
  } catch (error) {
    io.stderr.write(`error: ${toError(error).message}\n`);
    return 2;
  }

  let zk: ZkClient | undefined;
  const target = resolveZkConnect(values.zk, io.env);
  const connect = async (): Promise<ZkClient> => {
    zk = createZkClient({
      ...(auth ? { auth } : {}),
      connect: target.connect,
      root: values.root ?? io.env.ORRERY_ROOT ?? '/orrery',
      connectTimeoutMs: 8000,
    });
    try {
      await zk.start();
    } catch (error) {
      // Say which address was tried, where it came from, and how to name another.
      if (hasErrorCode(error, 'connection-loss', 'timeout')) {
        throw new OrreryError('connection-loss', `no ZooKeeper answered at ${target.connect} within 8 s (${describeZkSource(target.source)}); start the local platform with npm start, or name one with --zk HOST:PORT or ORRERY_ZK`);
      }
      throw error;
    }
    return zk;
  };

  try {
    await run(positionals, values, output, connect, io, auth);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n${HELP_HINT}`);
      return 2;
    }
    reportError(error, io);
    return 1;
  } finally {
    await zk?.close();
  }
}

/** What follows a usage error: where the help is (the whole help would bury the one line that matters). */
const HELP_HINT = "(orrery --help lists every command and flag; docs/cli.md explains them)\n";

function reportError(error: unknown, io: CliIo): void {
  const e = toError(error);
  const issues = hasErrorCode(e, 'validation', 'bad-data') ? (e.details.issues as ValidationIssue[] | undefined) : undefined;
  if (issues && issues.length > 0) {
    const head = e.message.split(':')[0];
    io.stderr.write(`error: ${head}:\n`);
    for (const issue of issues) io.stderr.write(`  - ${issue.message} [rule: ${issue.rule}]\n`);
    return;
  }
  io.stderr.write(`error: ${e.message}\n`);
}

/**
 * The CLI as a writer of job configs: `cli:<user>@<host>` in the job's config history, and a
 * failure to record it said on stderr (the write itself stands).
 */
export function cliWriter(io: CliIo): JobWriteOptions {
  const user = io.env.USER ?? io.env.LOGNAME ?? io.env.USERNAME ?? 'unknown';
  return {
    author: `cli:${user}@${hostname()}`,
    logger: { warn: (object, message) => io.stderr.write(`warning: ${message}${object.err instanceof Error ? `: ${object.err.message}` : ''}\n`) },
  };
}

function need(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`${what} is required`);
  return value;
}

function arity(positionals: string[], count: number, form: string): void {
  if (positionals.length !== count) throw new UsageError(`expected: orrery ${form}`);
}

async function run(positionals: string[], values: Values, output: 'json' | 'table', connect: () => Promise<ZkClient>, io: CliIo, auth: string | undefined): Promise<void> {
  const [command, sub, arg] = positionals;
  const print = (text: string): void => { io.stdout.write(text.endsWith('\n') ? text : `${text}\n`); };
  const json = (value: unknown): void => print(JSON.stringify(value, null, 2));

  /** Validates a job document, prints its diff against the namespace, and applies it (not with --dry-run: then false). */
  const applyDocument = async (document: unknown, namespace: string): Promise<boolean> => {
    const zk = await connect();
    const listing = await listJobs(zk, namespace);
    const existing = [...listing.jobs.map((j) => j.config.name), ...listing.broken.map((b) => b.name)];
    const entries = validateJobDocument(document, existing);
    const plan = await planJobs(zk, namespace, entries);
    for (const change of plan) {
      if (change.action === 'create') print(`+ create    ${change.name}${change.config.enabled ? '' : ` (disabled: set enabled: true, or run orrery -n ${namespace} enable ${change.name})`}`);
      else if (change.action === 'unchanged') print(`= unchanged ${change.name}`);
      else if (change.action === 'replace') print(`! replace   ${change.name} (its stored config is ${change.problem})`);
      else {
        print(`~ change    ${change.name}`);
        for (const c of change.changes) print(`    ${c.field}: ${formatValue(c.before)} → ${formatValue(c.after)}`);
      }
    }
    // A Node job runs only where an executor offers its handler: say so now, not at its first fire.
    for (const warning of await handlerWarnings(zk, namespace, entries)) io.stderr.write(`warning: ${warning}\n`);
    if (values['dry-run']) {
      print(`dry run: nothing written (${plan.filter((c) => c.action !== 'unchanged').length} job(s) would be written)`);
      return false;
    }
    const result = await applyPlan(zk, namespace, plan, cliWriter(io));
    print(`applied: ${result.written.length} written, ${result.unchanged.length} unchanged, ${result.conflicts.length} conflict(s)`);
    if (result.conflicts.length > 0) {
      throw new OrreryError('conflict', result.conflicts.map((c) => c.message).join('\n'), { details: { conflicts: result.conflicts } });
    }
    return true;
  };

  switch (command) {
    case 'ns': {
      if (sub === 'create') {
        arity(positionals, 3, 'ns create NAME');
        const settings = { description: values.description ?? '', alarm: values.webhook ? { webhook: values.webhook } : {} };
        const zk = await connect();
        await createNamespace(zk, arg!, settings);
        print(`namespace '${arg}' created`);
        return;
      }
      if (sub === 'list') {
        arity(positionals, 2, 'ns list');
        const list = await listNamespaces(await connect());
        if (output === 'json') json(list.map(({ name, info, problem }) => (info ? { name, ...info } : { name, broken: problem })));
        else print(formatTable(['NAME', 'DESCRIPTION', 'WEBHOOK', 'CREATED'], list.map(({ name, info, problem }) => (info ? [name, info.description, info.alarm.webhook ?? '', info.createdAt ? new Date(info.createdAt).toISOString() : ''] : [name, `BROKEN: ${problem ?? ''}`, '', '']))));
        return;
      }
      if (sub === 'delete') {
        arity(positionals, 3, 'ns delete NAME [--force]');
        await deleteNamespace(await connect(), arg!, { force: values.force === true });
        print(`namespace '${arg}' deleted`);
        return;
      }
      throw new UsageError(`unknown ns command '${sub ?? ''}': use create, list or delete`);
    }

    case 'acl': {
      if (sub !== 'secure') throw new UsageError(`unknown acl command '${sub ?? ''}': use secure`);
      arity(positionals, 2, 'acl secure');
      if (!auth) throw new UsageError('acl secure needs ZooKeeper digest credentials: set ORRERY_ZK_AUTH=user:password or pass --zk-auth-file FILE');
      const result = await secureTree(await connect());
      print(`secured ${result.secured} node(s): only ${auth.slice(0, auth.indexOf(':'))} can read or write them now${result.gone > 0 ? ` (${result.gone} vanished meanwhile)` : ''}`);
      return;
    }

    case 'import-saturn': {
      arity(positionals, 2, '-n NS import-saturn FILE [--dry-run]');
      const namespace = need(values.namespace, '-n NAMESPACE');
      const file = positionals[1]!;
      let exported: unknown;
      try {
        exported = JSON.parse(await readFile(file, 'utf8')) as unknown;
      } catch (error) {
        throw new OrreryError('validation', `${file}: not readable as JSON (${toError(error).message})`);
      }
      const imported = fromSaturnExport(exported);
      for (const r of imported.refused) print(`x refused   ${r.job}: ${r.reason}`);
      for (const n of imported.notes) print(`  note      ${n.job}.${n.field}: ${n.note}`);
      if (imported.document.jobs.length === 0) {
        print('nothing to import: no SHELL_JOB or PASSIVE_SHELL_JOB in the file');
        return;
      }
      if (await applyDocument(imported.document, namespace)) print(`imported jobs are disabled: enable each (orrery -n ${namespace} enable JOB) once Saturn no longer runs it`);
      return;
    }

    case 'apply': {
      arity(positionals, 1, '-n NS apply -f FILE [--dry-run]');
      const namespace = need(values.namespace, '-n NAMESPACE');
      const file = need(values.file, '-f FILE');
      await applyDocument(await readDocument(file), namespace);
      return;
    }

    case 'get': {
      const namespace = need(values.namespace, '-n NAMESPACE');
      if (sub === 'jobs') {
        arity(positionals, 2, '-n NS get jobs');
        const { jobs, broken } = await listJobs(await connect(), namespace);
        if (output === 'json') json([...jobs.map((j) => j.config), ...broken.map((b) => ({ name: b.name, broken: b.problem }))].sort((a, b) => (a.name < b.name ? -1 : 1)));
        else {
          const rows = [
            ...jobs.map(({ config: c }) => [c.name, c.type, c.cron ?? '(passive)', c.localMode ? 'local' : String(c.shardingTotalCount), c.enabled ? 'yes' : 'no', c.description]),
            ...broken.map((b) => [b.name, '?', '?', '?', '?', `BROKEN: ${b.problem}`]),
          ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
          print(formatTable(['NAME', 'TYPE', 'CRON', 'SHARDS', 'ENABLED', 'DESCRIPTION'], rows));
        }
        if (broken.length > 0) io.stderr.write(`warning: ${broken.length} broken job(s): ${broken.map((b) => b.name).join(', ')} — overwrite with 'orrery -n ${namespace} apply -f FILE' or remove with 'orrery -n ${namespace} delete NAME'\n`);
        return;
      }
      if (sub === 'job') {
        arity(positionals, 3, '-n NS get job NAME');
        const job = await readJob(await connect(), namespace, arg!);
        if (!job) throw new OrreryError('not-found', `job '${arg}' does not exist in namespace '${namespace}'`);
        if (output === 'json') json(job.config);
        else print(formatTable(['FIELD', 'VALUE'], Object.entries(job.config).map(([k, v]) => [k, formatValue(v)])));
        return;
      }
      if (sub === 'executors') {
        arity(positionals, 2, '-n NS get executors');
        const executors = await listExecutors(await connect(), namespace);
        if (output === 'json') json(executors);
        else print(formatTable(['NAME', 'STATUS', 'HOST', 'PID', 'VERSION', 'TAGS', 'HANDLERS'], executors.map((e) => [e.name, `${e.online ? 'online' : 'offline'}${e.meta.noTraffic ? ', drained' : ''}${e.problem ? `, BROKEN: ${e.problem}` : ''}`, e.info?.host ?? '', String(e.info?.pid ?? ''), e.info?.version ?? '', (e.info?.tags ?? []).join(','), (e.info?.handlers ?? []).join(',')])));
        return;
      }
      if (sub === 'assignment') {
        arity(positionals, 2, '-n NS get assignment');
        const list = await listAssignments(await connect(), namespace);
        if (output === 'json') json(list);
        else {
          const rows: string[][] = [];
          for (const { job, enabled, assignment, problem } of list) {
            if (problem) {
              rows.push([job, '-', `(broken: ${problem})`, '']);
              continue;
            }
            if (!assignment) {
              rows.push([job, '-', enabled ? '(not assigned yet)' : '(disabled)', '']);
              continue;
            }
            const owners = Object.entries(assignment.items).map(([e, items]) => `${e}: ${items.join(',')}`);
            const unassigned = assignment.unassigned.map((u) => `${u.item} (${u.reason})`).join(', ');
            rows.push([job, String(assignment.epoch), owners.join('; ') || '-', unassigned]);
          }
          print(formatTable(['JOB', 'EPOCH', 'EXECUTOR: ITEMS', 'UNASSIGNED'], rows));
        }
        return;
      }
      if (sub === 'shards') {
        arity(positionals, 3, '-n NS get shards JOB');
        await getShardsCommand(await connect(), namespace, arg!, output, io);
        return;
      }
      if (sub === 'runs') {
        arity(positionals, 3, '-n NS get runs JOB [--limit N]');
        let limit: number | undefined;
        if (values.limit !== undefined) {
          limit = Number(values.limit);
          if (!/^\d+$/.test(values.limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be an integer from 1 to 1000 (got '${values.limit}')`);
        }
        await getRunsCommand(await connect(), namespace, arg!, limit, output, { clusterToken: io.env.ORRERY_CLUSTER_TOKEN || undefined }, io);
        return;
      }
      throw new UsageError(`unknown get target '${sub ?? ''}': use jobs, job NAME, executors, assignment, shards JOB or runs JOB`);
    }

    case 'logs': {
      arity(positionals, 3, '-n NS logs JOB RUN [--stderr] [-f]');
      const namespace = need(values.namespace, '-n NAMESPACE');
      await logsCommand(await connect(), namespace, sub!, arg!, { stderr: values.stderr === true, follow: values.follow === true }, { clusterToken: io.env.ORRERY_CLUSTER_TOKEN || undefined }, io);
      return;
    }

    case 'enable':
    case 'disable': {
      arity(positionals, 2, `-n NS ${command} JOB`);
      const namespace = need(values.namespace, '-n NAMESPACE');
      const changed = await setJobEnabled(await connect(), namespace, sub!, command === 'enable', cliWriter(io));
      print(changed ? `job '${sub}' ${command}d` : `job '${sub}' was already ${command}d`);
      return;
    }

    case 'delete': {
      arity(positionals, 2, '-n NS delete JOB [--force]');
      const namespace = need(values.namespace, '-n NAMESPACE');
      await deleteJob(await connect(), namespace, sub!, { force: values.force === true, ...cliWriter(io) });
      print(`job '${sub}' deleted`);
      return;
    }

    case 'run':
    case 'stop': {
      arity(positionals, 2, `-n NS ${command} JOB [--items 0,2]${command === 'run' ? ' [--param X]' : ''}`);
      const namespace = need(values.namespace, '-n NAMESPACE');
      let items: number[] | undefined;
      if (values.items !== undefined) {
        items = values.items.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
        if (items.length === 0 || items.some((i) => !Number.isInteger(i))) throw new UsageError(`--items must be a comma-separated list of item numbers (got '${values.items}')`);
      }
      if (command === 'stop' && values.param !== undefined) throw new UsageError('--param goes with run, not stop');
      const zk = await connect();
      if (command === 'run') {
        const { executors } = await runJobNow(zk, namespace, sub!, { ...(items ? { items } : {}), ...(values.param !== undefined ? { param: values.param } : {}) });
        print(`run of job '${sub}' requested (executors: ${executors.join(', ')})`);
      } else {
        await stopJob(zk, namespace, sub!, items ? { items } : {});
        print(`stop of job '${sub}' requested`);
      }
      return;
    }

    case 'drain':
    case 'undrain': {
      arity(positionals, 2, `-n NS ${command} EXECUTOR`);
      const namespace = need(values.namespace, '-n NAMESPACE');
      const changed = await setNoTraffic(await connect(), namespace, sub!, command === 'drain');
      print(changed ? `executor '${sub}' ${command}ed` : `executor '${sub}' was already ${command}ed`);
      return;
    }

    case 'reshard': {
      if (positionals.length > 2) throw new UsageError('expected: orrery -n NS reshard [JOB]');
      const namespace = need(values.namespace, '-n NAMESPACE');
      await requestReshard(await connect(), namespace, sub);
      print(`reshard of ${sub ? `job '${sub}'` : `namespace '${namespace}'`} requested`);
      return;
    }

    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

/** Warnings for the file's Node jobs whose handler no online executor of the namespace offers. */
async function handlerWarnings(zk: ZkClient, namespace: string, entries: readonly JobDocumentEntry[]): Promise<string[]> {
  const nodeJobs = entries.filter((e) => e.config.type === 'node' && e.config.handler);
  if (nodeJobs.length === 0) return [];
  const online = (await listExecutors(zk, namespace)).filter((e) => e.online && e.info);
  const offered = new Set(online.flatMap((e) => e.info!.handlers));
  return nodeJobs
    .filter((e) => !offered.has(e.config.handler!))
    .map((e) => `jobs[${e.index}] (${e.config.name}): no online executor offers handler '${e.config.handler}'${online.length === 0 ? ' (no executor is online)' : ` (online: ${online.map((x) => `${x.name} [${x.info!.handlers.join(', ') || 'no handlers'}]`).join('; ')})`}; its shards stay unassigned until one starts with --jobs holding it`);
}

/** Reads a YAML or JSON file (JSON is YAML too, but a `.json` file gets JSON's stricter errors). */
async function readDocument(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new OrreryError('not-found', `cannot read ${file}: ${toError(error).message}`);
  }
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new OrreryError('validation', `${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${toError(error).message}`, {
      details: { issues: [{ field: '', rule: 'syntax', message: `${file}: ${toError(error).message}` }] },
    });
  }
}
