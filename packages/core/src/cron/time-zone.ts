/**
 * Wall-clock arithmetic in IANA time zones with `Intl` only (browser-safe).
 */

/** Calendar fields of a wall-clock time. Month is 1–12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when `timeZone` is an IANA zone this runtime knows (e.g. `Europe/Berlin`, `UTC`). */
export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || timeZone === '') return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Zones whose offset is always 0: no `Intl` call needed (the default zone of every job). */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu', 'Universal', 'Zulu']);

/** The wall-clock time of instant `ms` in `timeZone` (whole seconds). */
export function wallTime(ms: number, timeZone: string): WallTime {
  if (UTC_ZONES.has(timeZone)) return utcAsWall(Math.floor(ms / 1000) * 1000);
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

/** The wall time read as if it were UTC, in ms: a monotone number for comparing wall times. */
export function wallAsUtc(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/** The inverse of {@link wallAsUtc}. */
export function utcAsWall(ms: number): WallTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/** The zone's offset from UTC at instant `ms`, in ms (east positive; Berlin in winter: +3 600 000). */
export function zoneOffset(ms: number, timeZone: string): number {
  if (UTC_ZONES.has(timeZone)) return 0;
  const whole = Math.floor(ms / 1000) * 1000;
  return wallAsUtc(wallTime(whole, timeZone)) - whole;
}

const HOUR = 3_600_000;

/**
 * The instant at which the wall-clock time `wallMs` (see {@link wallAsUtc}) happens in `timeZone`:
 * - a time that happens once: that instant;
 * - a time that happens twice (a fall-back repeat): the **first** instant;
 * - a time that does not happen (a spring-forward gap): the first instant after the gap.
 */
export function wallToInstant(wallMs: number, timeZone: string): number {
  if (UTC_ZONES.has(timeZone)) return wallMs;
  // Fast path: no offset change within 3 hours either side, so the time happens exactly once.
  const guess = wallMs - zoneOffset(wallMs, timeZone);
  const around = zoneOffset(guess - 3 * HOUR, timeZone);
  if (around === zoneOffset(guess + 3 * HOUR, timeZone) && around === wallMs - guess) return guess;
  const offsets = new Set([zoneOffset(wallMs - 26 * HOUR, timeZone), zoneOffset(wallMs, timeZone), zoneOffset(wallMs + 26 * HOUR, timeZone)]);
  const matches: number[] = [];
  for (const offset of offsets) {
    const instant = wallMs - offset;
    if (wallAsUtc(wallTime(instant, timeZone)) === wallMs) matches.push(instant);
  }
  if (matches.length > 0) return Math.min(...matches);
  // In a gap: find the transition by bisection; the gap ends at the first instant of the new offset.
  const sorted = [...offsets].sort((a, b) => a - b);
  let lo = wallMs - sorted[sorted.length - 1]! - 3 * HOUR;
  let hi = wallMs - sorted[0]! + 3 * HOUR;
  const before = zoneOffset(lo, timeZone);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2 / 1000) * 1000;
    if (zoneOffset(mid, timeZone) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}
