/**
 * `GET /api/v1/cron/preview?expr=&timeZone=&count=&after=` (any signed-in user): the next fire
 * times of a cron expression in a time zone — by the executors' own schedule (core's
 * `createSchedule`) — and a note for every daylight-saving change that skips or repeats one.
 *
 * The DST rule it explains (core's, see cron/schedule.ts): a wall-clock time that happens twice
 * fires once, at its first instant; wall-clock times inside a spring-forward gap fire once, at the
 * first instant after the gap. An invalid expression or zone is a 400 naming the field and the rule.
 */
import { Type } from '@sinclair/typebox';
import { createSchedule, cronIssues, isValidTimeZone, validationError, wallAsUtc, wallTime, wallToInstant, zoneOffset, type ValidationIssue } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import { zonedTime, type ZonedTime } from '../../store/shards.js';

/** Fire times a preview lists at most. */
export const CRON_PREVIEW_MAX_COUNT = 100;
/** Fire times a preview lists unless asked for another number. */
export const CRON_PREVIEW_DEFAULT_COUNT = 10;
/** Wall-clock times examined for DST notes at most (a per-second expression across a gap is 3,600). */
const MAX_WALL_STEPS = 20_000;
const HOUR = 3_600_000;

/** One fire time, and how daylight saving shaped it. */
export interface PreviewFire extends ZonedTime {
  /** `shifted`: its wall time fell in a spring-forward gap; `first-of-repeat`: its wall time happens twice and this is the first. */
  dst?: 'shifted' | 'first-of-repeat';
}

/** A daylight-saving change met by the previewed fire times. */
export interface DstNote {
  kind: 'skipped' | 'repeated';
  /** The wall-clock times concerned (`YYYY-MM-DD HH:mm:ss`), the first and the last. */
  from: string;
  to: string;
  /** How many wall-clock fire times it concerns. */
  count: number;
  /** When they fire (once). */
  firesAt: ZonedTime;
  message: string;
}

/** A cron preview. */
export interface CronPreview {
  expr: string;
  timeZone: string;
  fires: PreviewFire[];
  notes: DstNote[];
}

const wallText = (wallMs: number): string => new Date(wallMs).toISOString().slice(0, 19).replace('T', ' ');

/** Problems with a preview's expression and zone (empty when valid). */
export function cronPreviewIssues(expr: string, timeZone: string): ValidationIssue[] {
  const issues = cronIssues(expr, 'expr');
  if (!isValidTimeZone(timeZone)) issues.push({ field: 'timeZone', rule: 'time-zone', message: `timeZone: '${timeZone}' is not a known IANA time zone (time-zone)` });
  return issues;
}

/**
 * The next `count` fire times of `expr` in `timeZone` strictly after `after` (epoch ms), with a note
 * per DST change they meet (pure but for the runtime's zone data). Throws on an invalid expression
 * or zone ({@link cronPreviewIssues} first).
 */
export function cronPreview(expr: string, timeZone: string, after: number, count: number): CronPreview {
  const schedule = createSchedule({ cron: expr, timeZone });
  const instants: number[] = [];
  for (let t = after; instants.length < count;) {
    const next = schedule.next(t);
    if (next === undefined) break;
    instants.push(next);
    t = next;
  }
  const fires: PreviewFire[] = instants.map((at) => zonedTime(at, timeZone));
  const notes: DstNote[] = [];
  if (instants.length === 0) return { expr, timeZone, fires, notes };

  // Walk the wall-clock times the expression matches (the same expression read in UTC is the wall
  // axis) over the previewed span, and find those that happen zero times or twice in the zone.
  const wallSchedule = createSchedule({ cron: expr, timeZone: 'UTC' });
  const lastWall = wallAsUtc(wallTime(instants.at(-1)!, timeZone));
  const byKey = new Map<string, DstNote>();
  let cursor = wallAsUtc(wallTime(after, timeZone));
  for (let step = 0; step < MAX_WALL_STEPS; step += 1) {
    const wall = wallSchedule.next(cursor);
    if (wall === undefined || wall > lastWall) break;
    cursor = wall;
    const offsets = new Set([zoneOffset(wall - 26 * HOUR, timeZone), zoneOffset(wall, timeZone), zoneOffset(wall + 26 * HOUR, timeZone)]);
    const happens = [...new Set([...offsets].map((o) => wall - o))].filter((i) => wallAsUtc(wallTime(i, timeZone)) === wall).sort((a, b) => a - b);
    if (happens.length === 1) continue;
    const kind = happens.length === 0 ? 'skipped' : 'repeated';
    const at = happens.length === 0 ? wallToInstant(wall, timeZone) : happens[0]!;
    if (at <= after) continue;
    const key = `${kind}:${kind === 'skipped' ? at : wallText(wall).slice(0, 10)}`;
    const note = byKey.get(key);
    if (note) {
      note.to = wallText(wall);
      note.count += 1;
    } else {
      byKey.set(key, { kind, from: wallText(wall), to: wallText(wall), count: 1, firesAt: zonedTime(at, timeZone), message: '' });
    }
    const fire = fires.find((f) => f.at === at);
    if (fire) fire.dst = kind === 'skipped' ? 'shifted' : 'first-of-repeat';
  }
  for (const note of byKey.values()) {
    const times = note.count === 1 ? note.from : `${note.count} fire times from ${note.from} to ${note.to}`;
    note.message = note.kind === 'skipped'
      ? `${times} ${note.count === 1 ? 'does' : 'do'} not exist in ${timeZone} (the clocks go forward): fires once at ${note.firesAt.local}, the first instant after the gap`
      : `${times} ${note.count === 1 ? 'happens' : 'happen'} twice in ${timeZone} (the clocks go back): fires once, at the first (${note.firesAt.local}), not again an hour later`;
    notes.push(note);
  }
  return { expr, timeZone, fires, notes };
}

const Zoned = { at: Type.Integer({ description: 'epoch ms' }), local: Type.String(), utc: Type.String(), timeZone: Type.String() };
export const CronPreviewSchema = Type.Object({
  expr: Type.String(),
  timeZone: Type.String(),
  fires: Type.Array(Type.Object({ ...Zoned, dst: Type.Optional(Type.Union([Type.Literal('shifted'), Type.Literal('first-of-repeat')])) })),
  notes: Type.Array(Type.Object({ kind: Type.Union([Type.Literal('skipped'), Type.Literal('repeated')]), from: Type.String(), to: Type.String(), count: Type.Integer(), firesAt: Type.Object(Zoned), message: Type.String() })),
});

export const cronRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/cron/preview', {
    schema: {
      tags: ['cron'],
      summary: 'The next fire times of a cron expression in a time zone, with a note when a DST change skips or repeats one',
      querystring: Type.Object({
        expr: Type.String({ minLength: 1, maxLength: 256, description: '5 fields (min hour day month weekday) or 6 (seconds first)' }),
        timeZone: Type.String({ minLength: 1, maxLength: 64, default: 'UTC' }),
        count: Type.Integer({ minimum: 1, maximum: CRON_PREVIEW_MAX_COUNT, default: CRON_PREVIEW_DEFAULT_COUNT }),
        after: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000, description: 'epoch ms to start from (default: now)' })),
      }, { additionalProperties: false }),
      response: { 200: CronPreviewSchema },
    },
    config: { access: { level: 'user' } },
  }, async (request) => {
    const { expr, timeZone, count, after } = request.query as { expr: string; timeZone: string; count: number; after?: number };
    const issues = cronPreviewIssues(expr, timeZone);
    if (issues.length > 0) throw validationError(issues, 'request');
    return cronPreview(expr, timeZone, after ?? ctx.now(), count);
  });
};
