/**
 * How the console shows an instant: a 24-hour clock in every language, the short month and day,
 * and the year only when it is not the current year (in the zone shown) — "Nov 23, 21:33:15",
 * "Dec 30, 2025, 23:59:59"; "11月23日 21:33:15", "2025年12月30日 23:59:59". No React here:
 * `I18nProvider.tsx` gives it as `formatTime`.
 */
import type { Locale } from './index';

/** Formats `epochMs` in the browser's zone, or in `timeZone` (then with the zone's short name); `now` decides whether the year is shown. */
export type TimeFormatter = (epochMs: number, timeZone?: string, now?: number) => string;

/** Month, day and a 24-hour time to the second (dateStyle cannot be combined with timeZoneName). */
const DATE_TIME: Intl.DateTimeFormatOptions = { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' };

/** A formatter for `locale`, with its Intl formats made once per zone and reused. */
export function createTimeFormatter(locale: Locale): TimeFormatter {
  const formats = new Map<string, Intl.DateTimeFormat>();
  const format = (kind: 'year' | 'short' | 'long', timeZone: string | undefined): Intl.DateTimeFormat => {
    const key = `${kind}|${timeZone ?? ''}`;
    let f = formats.get(key);
    if (!f) {
      const zone: Intl.DateTimeFormatOptions = timeZone ? { timeZone } : {};
      const options: Intl.DateTimeFormatOptions =
        kind === 'year'
          ? { year: 'numeric', ...zone }
          : { ...DATE_TIME, ...(kind === 'long' ? { year: 'numeric' } : {}), ...(timeZone ? { timeZone, timeZoneName: 'short' } : {}) };
      f = new Intl.DateTimeFormat(locale, options);
      formats.set(key, f);
    }
    return f;
  };
  return (epochMs, timeZone, now = Date.now()) => {
    const year = format('year', timeZone);
    const sameYear = year.format(epochMs) === year.format(now);
    return format(sameYear ? 'short' : 'long', timeZone).format(epochMs);
  };
}
