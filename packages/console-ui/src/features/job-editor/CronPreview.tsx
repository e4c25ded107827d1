/**
 * The next five fire times of the job's cron expression in its time zone, from the console
 * (`GET /cron/preview`: the executors' own schedule, with its daylight-saving rule), asked once the
 * expression has stopped changing for {@link PREVIEW_DEBOUNCE_MS}; and a note for each DST change
 * that skips or repeats one of them.
 */
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { CronPreviewAnswer } from '@orrery/console/api-types';
import { useId } from 'react';
import { api } from '../../api/client';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { useErrorMessage } from '../../ui/states';
import { useDebounced } from './useDebounced';

/** How long the preview waits for typing to pause, in ms. */
export const PREVIEW_DEBOUNCE_MS = 300;
/** Fire times shown. */
export const PREVIEW_COUNT = 5;

export const cronPreviewQuery = (expr: string, timeZone: string) =>
  queryOptions({
    queryKey: ['cron-preview', expr, timeZone, PREVIEW_COUNT] as const,
    queryFn: ({ signal }) => api<CronPreviewAnswer>('/cron/preview', { signal, query: { expr, timeZone, count: PREVIEW_COUNT } }),
    placeholderData: keepPreviousData,
  });

const browserZone = (): string | undefined => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
};

/** `blocked`: the checker found a problem with the expression or the zone (no request then). */
export function CronPreview({ cron, timeZone, blocked }: { cron: string; timeZone: string; blocked: boolean }) {
  const { t, formatTime } = useI18n();
  const message = useErrorMessage();
  const id = useId();
  // One string for both, so that the debounce compares values, not objects.
  const typed = `${cron.trim()}\n${timeZone.trim()}`;
  const spec = useDebounced(typed, PREVIEW_DEBOUNCE_MS);
  const settled = spec === typed;
  const [expr = '', zoneAsked = ''] = spec.split('\n');
  const preview = useQuery({ ...cronPreviewQuery(expr, zoneAsked), enabled: expr !== '' && !blocked && settled });
  const here = browserZone();

  let body;
  if (cron.trim() === '') body = <p className="muted">{t('jobEditor.preview.passive')}</p>;
  else if (blocked) body = <p className="muted">{t('jobEditor.preview.fixFirst')}</p>;
  else if (preview.isError) body = <p className="field-error">{t('jobEditor.preview.failed', { message: message(preview.error) })}</p>;
  else if (!preview.data) body = <p className="muted">{t('jobEditor.preview.loading')}</p>;
  else if (preview.data.fires.length === 0) body = <p className="muted">{t('jobEditor.preview.none')}</p>;
  else {
    const zone = preview.data.timeZone;
    body = (
      <>
        <ol className="fires" aria-labelledby={`${id}-title`} aria-busy={!settled || preview.isFetching || undefined}>
          {preview.data.fires.map((fire) => (
            <li key={fire.at}>
              <time dateTime={fire.utc}>{formatTime(fire.at, zone)}</time>
              {here && here !== zone && <span className="muted"> · {t('jobEditor.preview.yourTime', { time: formatTime(fire.at) })}</span>}
              {fire.dst && (
                <>
                  {' '}
                  <Badge tone="warn">{fire.dst === 'shifted' ? t('jobEditor.preview.shifted') : t('jobEditor.preview.firstOfRepeat')}</Badge>
                </>
              )}
            </li>
          ))}
        </ol>
        {preview.data.notes.length > 0 && (
          <ul className="dst-notes">
            {preview.data.notes.map((note) => (
              <li key={`${note.kind}:${note.from}`}>
                {t(note.kind === 'skipped' ? 'jobEditor.preview.skipped' : 'jobEditor.preview.repeated', { count: note.count, from: note.from, to: note.to, zone, at: formatTime(note.firesAt.at, zone) })}
              </li>
            ))}
          </ul>
        )}
      </>
    );
  }
  return (
    <section className="cron-preview" aria-labelledby={`${id}-title`} aria-live="polite">
      <h3 id={`${id}-title`}>{t('jobEditor.preview.title')}</h3>
      {body}
    </section>
  );
}
