/**
 * ExecutorInfo (the data of an executor's ephemeral `presence` node) and ExecutorMeta (its
 * persistent `meta` node, written by people: drain). Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { JobNameSchema } from './job-config.js';
import { checkWith } from './validate.js';

export const ExecutorInfoSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 255 }),
    pid: Type.Integer({ minimum: 1 }),
    version: Type.String({ maxLength: 64 }),
    /** Epoch ms. */
    startedAt: Type.Integer({ minimum: 0 }),
    /** Node job handlers this executor loaded (`defineJob` names). */
    handlers: Type.Array(JobNameSchema, { default: [] }),
    /** Tags for `@tag` entries of preferList. */
    tags: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), { default: [] }),
    /** Base URL of the executor's history and log endpoint. */
    httpUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    /** Shutting down gracefully: the allocator moves its shards away (it finishes its runs). */
    leaving: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
/** What an executor announces about itself while it is online. */
export type ExecutorInfo = Static<typeof ExecutorInfoSchema>;

export const ExecutorMetaSchema = Type.Object(
  {
    /** Drained: keeps what it runs, gets no new shards, loses its shards. */
    noTraffic: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
/** Settings people give an executor. */
export type ExecutorMeta = Static<typeof ExecutorMetaSchema>;


export const checkExecutorInfo = (input: unknown) => checkWith<ExecutorInfo>(ExecutorInfoSchema, input, 'executor info');
export const checkExecutorMeta = (input: unknown) => checkWith<ExecutorMeta>(ExecutorMetaSchema, input ?? {}, 'executor meta');

export function parseExecutorInfo(input: unknown): ExecutorInfo {
  const r = checkExecutorInfo(input);
  if (!r.ok) throw validationError(r.issues, 'executor info');
  return r.value;
}
export function parseExecutorMeta(input: unknown): ExecutorMeta {
  const r = checkExecutorMeta(input);
  if (!r.ok) throw validationError(r.issues, 'executor meta');
  return r.value;
}
