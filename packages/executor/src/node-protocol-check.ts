/**
 * The worker's check of the messages it receives: TypeBox's compiled check of `ParentMessageSchema`
 * (node-protocol.ts), standalone, so that a worker does not load TypeBox (through tsx, about half
 * a second of every worker's start). Generated — do not edit: node-protocol.test.ts fails when it
 * no longer matches the schema; `ORRERY_WRITE_PROTOCOL_CHECK=1 npx vitest run
 * packages/executor/src/node-protocol.test.ts` writes it again.
 */
import type { ParentMessage } from './node-protocol.js';

/** True when `value` is a {@link ParentMessage} (exactly what the schema accepts). */
export const isParentMessage = ((): ((value: unknown) => boolean) => {
  const local_0 = /^(.*)$/
  return function check(value: any): boolean {
    return (
      (((typeof value === 'object' && value !== null && !Array.isArray(value)) && (value['type'] === 'run') && (typeof value['runId'] === 'string') && value['runId'].length <= 256 && value['runId'].length >= 1 && (typeof value['module'] === 'string') && value['module'].length <= 4096 && value['module'].length >= 1 && (typeof value['context'] === 'object' && value['context'] !== null && !Array.isArray(value['context']) && !(value['context'] instanceof Date) && !(value['context'] instanceof Uint8Array)) && (Object.entries(value['context']).every(([key, value]) => (local_0.test(key) ? (true) : true))) && (typeof value['stdoutPath'] === 'string') && value['stdoutPath'].length <= 4096 && value['stdoutPath'].length >= 1 && (typeof value['stderrPath'] === 'string') && value['stderrPath'].length <= 4096 && value['stderrPath'].length >= 1 && (value['startAt'] !== undefined ? (Number.isFinite(value['startAt']) && value['startAt'] <= 8640000000000000 && value['startAt'] >= 0) : true) && (value['maxLogBytes'] !== undefined ? (Number.isInteger(value['maxLogBytes']) && value['maxLogBytes'] >= 1) : true) && (value['owner'] !== undefined ? ((typeof value['owner'] === 'boolean')) : true)) || ((typeof value === 'object' && value !== null && !Array.isArray(value)) && (value['type'] === 'preload') && (typeof value['module'] === 'string') && value['module'].length <= 4096 && value['module'].length >= 1) || ((typeof value === 'object' && value !== null && !Array.isArray(value)) && (value['type'] === 'cancel') && (typeof value['runId'] === 'string') && value['runId'].length <= 256 && value['runId'].length >= 1) || ((typeof value === 'object' && value !== null && !Array.isArray(value)) && (value['type'] === 'abort') && (typeof value['runId'] === 'string') && value['runId'].length <= 256 && value['runId'].length >= 1 && (typeof value['reason'] === 'string') && value['reason'].length <= 256) || ((typeof value === 'object' && value !== null && !Array.isArray(value)) && (value['type'] === 'ownership') && (typeof value['runId'] === 'string') && value['runId'].length <= 256 && value['runId'].length >= 1 && (typeof value['owner'] === 'boolean')))
    )
  }
})() as (value: unknown) => value is ParentMessage;
