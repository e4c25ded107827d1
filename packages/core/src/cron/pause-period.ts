/**
 * Pause periods (Saturn's `pausePeriodDate` / `pausePeriodTime`), evaluated on the wall clock of
 * the job's time zone:
 * - `pausePeriodDate`: `MM/dd-MM/dd[,MM/dd-MM/dd…]`, inclusive days; a range may wrap the year end.
 * - `pausePeriodTime`: `HH:mm-HH:mm[,…]`, inclusive minutes; a range may wrap midnight.
 * With both set, a time is paused when its date **and** its time are in a range; with one set,
 * when that one matches.
 */
import type { ValidationIssue } from '../errors.js';
import type { WallTime } from './time-zone.js';

/** A parsed range in minutes of the year (`MM/dd` → month*32+day) or of the day (`HH:mm` → minutes). */
interface Range {
  from: number;
  to: number;
}

/** Parsed pause periods. */
export interface PausePeriods {
  dates: Range[];
  times: Range[];
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function parseList(
  text: string,
  field: string,
  item: RegExp,
  toValue: (a: number, b: number) => number | undefined,
  format: string,
  issues: ValidationIssue[],
): Range[] {
  const ranges: Range[] = [];
  if (text.trim() === '') return ranges;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const m = item.exec(part);
    const from = m ? toValue(Number(m[1]), Number(m[2])) : undefined;
    const to = m ? toValue(Number(m[3]), Number(m[4])) : undefined;
    if (from === undefined || to === undefined) {
      issues.push({ field, rule: 'format', message: `${field}: '${part}' is not a range of the form ${format}` });
      continue;
    }
    ranges.push({ from, to });
  }
  return ranges;
}

/** Parses and validates pause periods; problems are pushed to `issues`. */
export function parsePausePeriods(
  pausePeriodDate: string | undefined,
  pausePeriodTime: string | undefined,
  issues: ValidationIssue[] = [],
): PausePeriods {
  const dates = parseList(
    pausePeriodDate ?? '',
    'pausePeriodDate',
    /^(\d{1,2})\/(\d{1,2})-(\d{1,2})\/(\d{1,2})$/,
    (month, day) => (month >= 1 && month <= 12 && day >= 1 && day <= DAYS_IN_MONTH[month - 1]! ? month * 32 + day : undefined),
    'MM/dd-MM/dd (e.g. 12/24-12/26)',
    issues,
  );
  const times = parseList(
    pausePeriodTime ?? '',
    'pausePeriodTime',
    /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/,
    (hour, minute) => (hour <= 23 && minute <= 59 ? hour * 60 + minute : undefined),
    'HH:mm-HH:mm (e.g. 23:00-01:30)',
    issues,
  );
  return { dates, times };
}

const inRange = (value: number, r: Range): boolean => (r.from <= r.to ? value >= r.from && value <= r.to : value >= r.from || value <= r.to);

/** True when wall time `w` is inside the pause periods. */
export function isPaused(periods: PausePeriods, w: WallTime): boolean {
  const hasDates = periods.dates.length > 0;
  const hasTimes = periods.times.length > 0;
  if (!hasDates && !hasTimes) return false;
  const dateHit = !hasDates || periods.dates.some((r) => inRange(w.month * 32 + w.day, r));
  const timeHit = !hasTimes || periods.times.some((r) => inRange(w.hour * 60 + w.minute, r));
  return dateHit && timeHit;
}
