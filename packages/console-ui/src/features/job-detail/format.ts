/** How the job detail page words and colours things: durations, sizes, outcomes, item states (pure). */
import type { RunAnswer, ShardsAnswer } from '@orrery/console/api-types';
import type { MessageKey, MessageParams } from '../../i18n';
import type { Tone } from '../../ui/Badge';

type T = (key: MessageKey, params?: MessageParams) => string;

/** A run's status (an outcome or `running`). */
export type RunStatusName = RunAnswer['status'];
/** An item's state in the shards answer. */
export type ItemState = ShardsAnswer['items'][number]['state'];

/** The badge tone of a run status or an item state. */
export const STATUS_TONE: Record<RunStatusName | ItemState, Tone> = {
  running: 'info',
  succeeded: 'ok',
  failed: 'bad',
  'timed-out': 'warn',
  aborted: 'muted',
  'never-run': 'muted',
  unassigned: 'warn',
};

/** The message key naming a run status or an item state. */
export const statusKey = (status: string): MessageKey => {
  switch (status) {
    case 'running':
    case 'succeeded':
    case 'failed':
    case 'timed-out':
    case 'aborted':
    case 'never-run':
    case 'unassigned':
      return `jobDetail.status.${status}`;
    default:
      return 'jobDetail.status.unknown';
  }
};

/** The tone of any status string (an unknown one is muted). */
export const toneOf = (status: string): Tone => STATUS_TONE[status as RunStatusName] ?? 'muted';

/** A duration for people: 850 ms, 12.4 s, 3 min 04 s, 2 h 05 min, 3 d 4 h. */
export function formatDuration(ms: number, t: T): string {
  if (ms < 1000) return t('jobDetail.duration.ms', { n: Math.max(0, Math.round(ms)) });
  if (ms < 60_000) return t('jobDetail.duration.s', { n: (ms / 1000).toFixed(ms < 10_000 ? 2 : 1).replace(/\.?0+$/, '') });
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return t('jobDetail.duration.min', { m: Math.floor(seconds / 60), s: String(seconds % 60).padStart(2, '0') });
  const minutes = Math.floor(seconds / 60);
  if (minutes < 24 * 60) return t('jobDetail.duration.h', { h: Math.floor(minutes / 60), m: String(minutes % 60).padStart(2, '0') });
  const hours = Math.floor(minutes / 60);
  return t('jobDetail.duration.d', { d: Math.floor(hours / 24), h: hours % 24 });
}

/** A duration axis label (shorter: 0, 500 ms, 2 s, 5 min, 1 h). */
export function formatDurationTick(ms: number, t: T): string {
  if (ms === 0) return '0';
  if (ms < 1000) return t('jobDetail.duration.ms', { n: ms });
  if (ms < 60_000) return t('jobDetail.duration.s', { n: ms / 1000 });
  if (ms < 3_600_000) return t('jobDetail.duration.minShort', { m: +(ms / 60_000).toFixed(1) });
  if (ms < 86_400_000) return t('jobDetail.duration.hShort', { h: +(ms / 3_600_000).toFixed(1) });
  return t('jobDetail.duration.dShort', { d: +(ms / 86_400_000).toFixed(1) });
}

/** A byte count for people (B, KiB, MiB, GiB). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
