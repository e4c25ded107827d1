/**
 * The console API's answers as TypeScript types, derived from the very TypeBox schemas its routes
 * validate and serialise with (and `/api/v1/openapi.json` publishes). The console UI imports these
 * with `import type` (nothing of the server reaches its bundle), so a changed answer is a type
 * error in the UI, not a page that breaks at run time.
 */
import type { Static } from '@sinclair/typebox';
import type { AssignmentMap, PreviewBodySchema, PreviewSchema } from './server/routes/assignment.js';
import type { AuditEntrySchema, AuditListSchema } from './server/routes/audit.js';
import type { MeSchema } from './server/routes/auth.js';
import type { CronPreviewSchema } from './server/routes/cron.js';
import type { DrainAnswerSchema, EXECUTOR_STATES, ExecutorDetailSchema, ExecutorSummarySchema } from './server/routes/executors.js';
import type { ImportAnswer } from './server/routes/import-export.js';
import type { DiffAnswer, HistoryAnswer, VersionAnswer } from './server/routes/job-history.js';
import type { BatchAnswer, JobAnswer, ListAnswer, ListItem, WriteAnswer } from './server/routes/jobs.js';
import type { NamespaceSummary } from './server/routes/namespaces.js';
import type { RunsListing } from './server/routes/runs.js';
import type { ShardsSchema } from './server/routes/shards.js';
import type { JOB_STATES, StatsSchema } from './server/routes/stats.js';
import type { TokenSchema } from './server/routes/tokens.js';
import type { NewUserBodySchema, UserChangeBodySchema, UserSchema } from './server/routes/users.js';
import type { RunViewSchema } from './store/runs.js';

/** `GET /auth/me`. */
export type MeAnswer = Static<typeof MeSchema>;
/** One namespace of `GET /namespaces` (and the answer of its create, get, update). */
export type NamespaceSummaryAnswer = Static<typeof NamespaceSummary>;
/** `GET …/jobs`. */
export type JobListAnswer = Static<typeof ListAnswer>;
/** One job of `GET …/jobs`. */
export type JobListItemAnswer = Static<typeof ListItem>;
/** `GET …/jobs/:job`. */
export type JobDetailAnswer = Static<typeof JobAnswer>;
/** The answer of a job create, update, copy, enable, disable or rollback. */
export type JobWriteAnswer = Static<typeof WriteAnswer>;
/** `POST …/jobs/batch`. */
export type JobBatchAnswer = Static<typeof BatchAnswer>;
/** `GET …/jobs/:job/shards`. */
export type ShardsAnswer = Static<typeof ShardsSchema>;
/** One run (`GET …/runs/:runId`, and each run of a listing). */
export type RunAnswer = Static<typeof RunViewSchema>;
/** `GET …/jobs/:job/runs`. */
export type RunsAnswer = Static<typeof RunsListing>;
/** `GET …/jobs/:job/history`. */
export type JobHistoryAnswer = Static<typeof HistoryAnswer>;
/** `GET …/jobs/:job/history/:version`. */
export type JobVersionAnswer = Static<typeof VersionAnswer>;
/** `GET …/jobs/:job/diff`. */
export type JobDiffAnswer = Static<typeof DiffAnswer>;
/** One executor of `GET …/executors`. */
export type ExecutorSummaryAnswer = Static<typeof ExecutorSummarySchema>;
/** `GET …/executors/:executor`. */
export type ExecutorDetailAnswer = Static<typeof ExecutorDetailSchema>;
/** An executor's state. */
export type ExecutorStateName = (typeof EXECUTOR_STATES)[number];
/** `GET …/assignment`. */
export type AssignmentAnswer = Static<typeof AssignmentMap>;
/** The body of `POST …/assignment/preview`. */
export type AssignmentPreviewBody = Static<typeof PreviewBodySchema>;
/** `POST …/assignment/preview`. */
export type AssignmentPreviewAnswer = Static<typeof PreviewSchema>;
/** `POST …/import`. */
export type ImportAnswerBody = Static<typeof ImportAnswer>;
/** `GET /cron/preview`. */
export type CronPreviewAnswer = Static<typeof CronPreviewSchema>;
/** `GET …/stats`. */
export type StatsAnswer = Static<typeof StatsSchema>;
/** A job's state in the stats. */
export type StatsJobState = (typeof JOB_STATES)[number];
/** One entry of `GET /audit`. */
export type AuditEntryAnswer = Static<typeof AuditEntrySchema>;
/** One user of `GET /users`. */
export type UserAnswer = Static<typeof UserSchema>;
/** One token of `GET /tokens`. */
export type TokenAnswer = Static<typeof TokenSchema>;
/** A page of `GET /audit`. */
export type AuditListAnswer = Static<typeof AuditListSchema>;
/** The answer of `POST …/executors/:executor/drain` and `…/undrain`. */
export type DrainAnswer = Static<typeof DrainAnswerSchema>;
/** The body of `POST /users`. */
export type NewUserBody = Static<typeof NewUserBodySchema>;
/** The body of `PUT /users/:user`. */
export type UserChangeBody = Static<typeof UserChangeBodySchema>;
