/**
 * A job's config history: `GET …/jobs/:job/history` (the kept versions with author and time),
 * `GET …/jobs/:job/history/:version` (one version's config), `GET …/jobs/:job/diff?from=&to=`
 * (field by field, core's `diffJobConfig`) and `POST …/jobs/:job/rollback` — an ordinary
 * compare-and-set update to an old version's config, audited as `job.rollback`.
 *
 * The history is not in the cache (store/job-history.ts): these routes read it from ZooKeeper on
 * demand — at most `JOB_HISTORY_LIMIT` reads for a listing, one or two for a version or a diff.
 */
import { Type } from '@sinclair/typebox';
import { diffJobConfig, JobConfigSchema, OrreryError, type JobConfig } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { JOB_HISTORY_LIMIT, listJobHistory, readJobVersion } from '../../store/job-history.js';
import { updateJob } from '../../store/jobs.js';
import { assertCachedNamespace, JobRouteParams, writerOf } from './jobs.js';

const Version = Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: "a version of the job's config node" });

export const HistoryAnswer = Type.Object({
  job: Type.String(),
  limit: Type.Integer({ description: 'how many versions are kept per job (the newest)' }),
  currentVersion: Type.Union([Type.Integer(), Type.Null()], { description: 'the job config version now (null: the job is gone)' }),
  versions: Type.Array(Type.Object({
    version: Type.Integer(),
    author: Type.Optional(Type.String({ description: "a console user, or cli:<user>@<host>" })),
    at: Type.Optional(Type.Integer({ description: 'epoch ms' })),
    problem: Type.Optional(Type.String({ description: 'the history node cannot be read' })),
  }), { description: 'newest first' }),
});
export const VersionAnswer = Type.Object({ version: Type.Integer(), author: Type.String(), at: Type.Integer(), config: JobConfigSchema });
const Change = Type.Object({ field: Type.String(), before: Type.Unknown(), after: Type.Unknown() });
export const DiffAnswer = Type.Object({ job: Type.String(), from: Type.Integer(), to: Type.Integer(), changes: Type.Array(Change) });

function versionNotKept(namespace: string, job: string, version: number): OrreryError {
  return new OrreryError('not-found', `version ${version} of job '${job}' is not in its history (the last ${JOB_HISTORY_LIMIT} versions are kept)`, { details: { namespace, job, version } });
}

/** A version's config: from the history, or the job's current config when that is the version asked for. */
async function configAt(ctx: ConsoleContext, namespace: string, job: string, version: number): Promise<JobConfig> {
  const kept = await readJobVersion(ctx.zk, namespace, job, version);
  if (kept) return kept.config;
  const current = ctx.cache.job(namespace, job)?.config;
  if (current?.ok && current.stat.version === version) return current.value;
  throw versionNotKept(namespace, job, version);
}

export const jobHistoryRoutes: ConsoleRoutes = async (app, ctx) => {
  const base = '/namespaces/:namespace/jobs/:job';

  app.get(`${base}/history`, {
    schema: { tags: ['jobs'], summary: "A job's config versions, newest first, with author and time (read from ZooKeeper on demand)", params: JobRouteParams, response: { 200: HistoryAnswer } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    assertCachedNamespace(ctx, namespace);
    const versions = await listJobHistory(ctx.zk, namespace, job);
    const current = ctx.cache.job(namespace, job);
    if (!current && versions.length === 0) throw new OrreryError('not-found', `job '${job}' does not exist in namespace '${namespace}'`, { details: { namespace, job } });
    return { job, limit: JOB_HISTORY_LIMIT, currentVersion: current?.config.stat.version ?? null, versions };
  });

  app.get(`${base}/history/:version`, {
    schema: { tags: ['jobs'], summary: 'One kept version of a job config', params: Type.Composite([JobRouteParams, Type.Object({ version: Version })], { additionalProperties: false }), response: { 200: VersionAnswer } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job, version } = request.params as { namespace: string; job: string; version: number };
    assertCachedNamespace(ctx, namespace);
    const kept = await readJobVersion(ctx.zk, namespace, job, version);
    if (!kept) throw versionNotKept(namespace, job, version);
    return kept;
  });

  app.get(`${base}/diff`, {
    schema: {
      tags: ['jobs'],
      summary: 'Field-by-field differences between two versions of a job config (to: default the current version)',
      params: JobRouteParams,
      querystring: Type.Object({ from: Version, to: Type.Optional(Version) }, { additionalProperties: false }),
      response: { 200: DiffAnswer },
    },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const query = request.query as { from: number; to?: number };
    assertCachedNamespace(ctx, namespace);
    const to = query.to ?? ctx.cache.job(namespace, job)?.config.stat.version;
    if (to === undefined) throw new OrreryError('not-found', `job '${job}' does not exist in namespace '${namespace}': name both versions (from and to)`, { details: { namespace, job } });
    const [before, after] = await Promise.all([configAt(ctx, namespace, job, query.from), configAt(ctx, namespace, job, to)]);
    return { job, from: query.from, to, changes: diffJobConfig(before, after) };
  });

  app.post(`${base}/rollback`, {
    schema: {
      tags: ['jobs'],
      summary: "Put an old version's config back (owner): a compare-and-set update from currentVersion (409 with the current version and config when it is stale), audited as job.rollback",
      params: JobRouteParams,
      body: Type.Object({ version: Version, currentVersion: Version }, { additionalProperties: false }),
      response: { 200: Type.Object({ name: Type.String(), version: Type.Integer(), config: JobConfigSchema, changed: Type.Boolean(), rolledBackTo: Type.Integer() }) },
    },
    config: { access: { level: 'owner' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { version, currentVersion } = request.body as { version: number; currentVersion: number };
    assertCachedNamespace(ctx, namespace);
    const kept = await readJobVersion(ctx.zk, namespace, job, version);
    if (!kept) throw versionNotKept(namespace, job, version);
    const written = await updateJob(ctx.zk, namespace, job, kept.config, currentVersion, writerOf(ctx, request));
    if (written.changed) await ctx.audit.record(request, { action: 'job.rollback', namespace, job, before: written.before, after: written.config, details: { toVersion: version, version: written.version } });
    return { name: job, version: written.version, config: written.config, changed: written.changed, rolledBackTo: version };
  });
};
