/**
 * `GET /api/v1/namespaces/:namespace/export` (viewer) and `POST …/import?dryRun=` (owner): the same
 * `{jobs: [...]}` document as `orrery apply -f`, in YAML or JSON; `from=saturn` takes a JSON export
 * of Saturn job configs instead, converted as `orrery import-saturn` does (store/saturn-import.ts).
 *
 * Import is the CLI's one code path: `validateJobDocument` (every problem of the document at once),
 * `planJobs` (the three-way merge with the last-applied entries) and, unless a dry run,
 * `applyPlan` (one create or compare-and-set per job, each version recorded in the job's history
 * with the caller as author). A dry run reads and writes nothing but answers the same diff.
 *
 * Export lists the valid jobs of the cache with every field (defaults included); broken jobs cannot
 * be exported and are named in the `orrery-broken-jobs` header.
 */
import { Type } from '@sinclair/typebox';
import { toError, validationError } from '@orrery/core';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ConsoleRoutes } from '../app.js';
import { applyPlan, planJobs, validateJobDocument } from '../../store/jobs.js';
import { fromSaturnExport } from '../../store/saturn-import.js';
import { NamespaceParams } from './namespaces.js';
import { assertCachedNamespace, writerOf } from './jobs.js';

/** The largest import document, in bytes (10,000 jobs of a few hundred bytes each, with room). */
export const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;
/** Media types read as YAML. */
export const YAML_MEDIA_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

const Change = Type.Object({ field: Type.String(), before: Type.Unknown(), after: Type.Unknown() });
const PlannedChange = Type.Object({
  name: Type.String(),
  action: Type.Union(['create', 'update', 'replace', 'unchanged'].map((a) => Type.Literal(a))),
  enabled: Type.Boolean({ description: 'whether the job is enabled after the import' }),
  changes: Type.Optional(Type.Array(Change, { description: 'update: the fields that change' })),
  problem: Type.Optional(Type.String({ description: "replace: what is wrong with the stored config" })),
});
export const ImportAnswer = Type.Object({
  dryRun: Type.Boolean(),
  saturn: Type.Optional(Type.Object({
    refused: Type.Array(Type.Object({ job: Type.String(), reason: Type.String() }), { description: 'Saturn jobs not imported, and why (Java and message jobs, names Orrery refuses)' }),
    notes: Type.Array(Type.Object({ job: Type.String(), field: Type.String(), note: Type.String() }), { description: 'Saturn fields not carried over (and why), or carried over changed' }),
  }, { description: 'from=saturn: what the conversion of the Saturn export said' })),
  changes: Type.Array(PlannedChange),
  result: Type.Optional(Type.Object({
    written: Type.Array(Type.String()),
    unchanged: Type.Array(Type.String()),
    conflicts: Type.Array(Type.Object({ name: Type.String(), message: Type.String() }), { description: 'jobs changed by someone else since the plan: nothing was written for them' }),
  })),
});

/** Whether an export is YAML: `?format=` wins, then the `Accept` header; JSON otherwise. */
export function exportFormat(format: string | undefined, accept: string | undefined): 'yaml' | 'json' {
  if (format === 'yaml' || format === 'json') return format;
  const types = (accept ?? '').toLowerCase().split(',').map((t) => t.split(';')[0]!.trim());
  return types.some((t) => YAML_MEDIA_TYPES.includes(t)) ? 'yaml' : 'json';
}

export const importExportRoutes: ConsoleRoutes = async (app, ctx) => {
  // A scope of its own: the YAML body parser serves these routes only.
  await app.register(async (scope) => {
    scope.addContentTypeParser(YAML_MEDIA_TYPES, { parseAs: 'string', bodyLimit: IMPORT_BODY_LIMIT }, (_request, body, done) => {
      try {
        done(null, parseYaml(String(body), { maxAliasCount: 100 }));
      } catch (error) {
        const text = `body: not valid YAML (${toError(error).message.split('\n')[0]})`;
        done(validationError([{ field: 'body', rule: 'yaml', message: text }], 'request'), undefined);
      }
    });

    scope.get('/namespaces/:namespace/export', {
      schema: {
        tags: ['jobs'],
        summary: "A namespace's jobs as an `orrery apply` document {jobs: [...]}: YAML or JSON (format=, else Accept)",
        params: NamespaceParams,
        querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('yaml'), Type.Literal('json')])) }, { additionalProperties: false }),
      },
      config: { access: { level: 'viewer' } },
    }, async (request, reply) => {
      const { namespace } = request.params as { namespace: string };
      const { format } = request.query as { format?: 'yaml' | 'json' };
      assertCachedNamespace(ctx, namespace);
      const jobs = [];
      const broken: string[] = [];
      for (const name of ctx.cache.jobNames(namespace)) {
        const config = ctx.cache.job(namespace, name)?.config;
        if (config?.ok) jobs.push(config.value);
        else if (config) broken.push(name);
      }
      if (broken.length > 0) void reply.header('orrery-broken-jobs', broken.join(','));
      void reply.header('content-disposition', `attachment; filename="${namespace}-jobs.${exportFormat(format, request.headers.accept) === 'yaml' ? 'yaml' : 'json'}"`);
      if (exportFormat(format, request.headers.accept) === 'yaml') {
        void reply.type('application/yaml; charset=utf-8');
        return stringifyYaml({ jobs });
      }
      void reply.type('application/json; charset=utf-8');
      return JSON.stringify({ jobs });
    });

    scope.post('/namespaces/:namespace/import', {
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        tags: ['jobs'],
        summary: 'Apply an `orrery apply` document {jobs: [...]} (owner; JSON or YAML body): the diff per job and, unless dryRun, the write result. As the CLI: validate everything first, then one write per job',
        params: NamespaceParams,
        querystring: Type.Object({
          dryRun: Type.Optional(Type.Boolean({ default: false })),
          from: Type.Optional(Type.Union([Type.Literal('orrery'), Type.Literal('saturn')], { default: 'orrery', description: "saturn: the body is a JSON export of Saturn job configs (as `orrery import-saturn`): its shell jobs are imported disabled" })),
        }, { additionalProperties: false }),
        response: { 200: ImportAnswer },
      },
      config: { access: { level: 'owner' } },
    }, async (request) => {
      const { namespace } = request.params as { namespace: string };
      const { dryRun, from } = request.query as { dryRun?: boolean; from?: 'orrery' | 'saturn' };
      assertCachedNamespace(ctx, namespace);
      const saturn = from === 'saturn' ? fromSaturnExport(request.body) : undefined;
      const entries = validateJobDocument(saturn ? saturn.document : request.body, ctx.cache.jobNames(namespace));
      const plan = await planJobs(ctx.zk, namespace, entries);
      const changes = plan.map((c) => ({
        name: c.name,
        action: c.action,
        enabled: c.config.enabled,
        ...(c.action === 'update' ? { changes: c.changes } : {}),
        ...(c.action === 'replace' ? { problem: c.problem } : {}),
      }));
      const said = saturn ? { saturn: { refused: saturn.refused, notes: saturn.notes } } : {};
      if (dryRun === true) return { dryRun: true, ...said, changes };
      const result = await applyPlan(ctx.zk, namespace, plan, writerOf(ctx, request));
      if (result.written.length > 0) {
        await ctx.audit.record(request, { action: 'namespace.import', namespace, details: { ...(saturn ? { from: 'saturn' } : {}), written: result.written, conflicts: result.conflicts.map((c) => c.name), changes: changes.filter((c) => c.action !== 'unchanged') } });
      }
      return { dryRun: false, ...said, changes, result };
    });
  });
};

