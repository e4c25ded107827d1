/**
 * `/audit`: the audit log, newest first — who, when (the browser's zone; the exact instant on
 * hover), from which address, what, where — each entry expandable to its before/after, field by
 * field. Filters by user, namespace and job go to the API and stay in the URL; the time window
 * ("since") is applied to what is loaded (the API has no time parameter), and paging stops once
 * the entries are older than it. Older pages come with `before` = the last page's `next`.
 */
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import type { AuditEntryAnswer } from '@orrery/console/api-types';
import { Fragment, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { isApiError } from '../../api/client';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading } from '../../ui/states';
import { namespacesQuery } from '../namespaces/queries';
import { SINCE_WINDOWS, auditQuery, fieldChanges, sinceCutoff, type AuditFilters, type Since } from './queries';
import './audit.css';

const route = getRouteApi('/_app/audit');

/** How long a filter field waits for typing to pause, in ms. */
export const FILTER_DEBOUNCE_MS = 300;

export function AuditPage() {
  const filters = route.useSearch();
  const navigate = route.useNavigate();
  const onFiltersChange = useCallback((next: AuditFilters) => void navigate({ search: next, replace: true }), [navigate]);
  return <AuditView filters={filters} onFiltersChange={onFiltersChange} />;
}

export function AuditView({ filters, onFiltersChange }: { filters: AuditFilters; onFiltersChange: (filters: AuditFilters) => void }) {
  const { t } = useI18n();
  const [since, setSince] = useState<Since>('all');
  const list = useInfiniteQuery(auditQuery(filters));
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  // The window's start moves with each answer (a refetch is "now" again).
  const cutoff = useMemo(() => sinceCutoff(since, Date.now()), [since, list.dataUpdatedAt]);
  const loaded = useMemo(() => list.data?.pages.flatMap((p) => p.entries) ?? [], [list.data]);
  const entries = useMemo(() => (cutoff === undefined ? loaded : loaded.filter((e) => e.at >= cutoff)), [loaded, cutoff]);
  const oldest = loaded.at(-1);
  // Newest first: once the oldest loaded entry is before the window, every older page is too.
  const more = list.hasNextPage && (cutoff === undefined || (oldest !== undefined && oldest.at >= cutoff));
  const filtered = Boolean(filters.namespace || filters.job || filters.user) || since !== 'all';
  const toggle = (id: number) =>
    setExpanded((open) => {
      const next = new Set(open);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  return (
    <section aria-labelledby="audit-title" className="audit-page">
      <div className="page-header">
        <h1 id="audit-title">{t('audit.title')}</h1>
        {list.isSuccess && <span className="muted">{t('audit.count', { count: entries.length })}</span>}
      </div>
      <AuditFiltersBar filters={filters} onChange={onFiltersChange} since={since} onSinceChange={setSince} />
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        isApiError(list.error, 'forbidden') ? (
          <Empty>{t('audit.forbidden')}</Empty>
        ) : (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} />
        )
      ) : entries.length === 0 && !more ? (
        <Empty
          action={
            filtered ? (
              <button
                type="button"
                onClick={() => {
                  setSince('all');
                  onFiltersChange({});
                }}
              >
                {t('audit.clearFilters')}
              </button>
            ) : undefined
          }
        >
          {filtered ? t('audit.emptyFiltered') : t('audit.empty')}
        </Empty>
      ) : (
        <>
          {entries.length === 0 ? (
            <Empty>{t('audit.noneLoadedInWindow')}</Empty>
          ) : (
            <div className="table-scroll audit-scroll" role="region" aria-labelledby="audit-title" tabIndex={0}>
              <table className="data audit-table">
                <thead>
                  <tr>
                    <th scope="col">{t('audit.col.when')}</th>
                    <th scope="col">{t('audit.col.who')}</th>
                    <th scope="col">{t('audit.col.address')}</th>
                    <th scope="col">{t('audit.col.action')}</th>
                    <th scope="col">{t('audit.col.where')}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t('audit.col.details')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map((entry) => (
                    <EntryRows key={entry.id} entry={entry} filters={filters} open={expanded.has(entry.id)} onToggle={() => toggle(entry.id)} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <div className="audit-more">
            {more ? (
              <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
                {list.isFetchingNextPage ? t('audit.loadingMore') : t('audit.loadMore')}
              </button>
            ) : (
              <span className="muted">{t('audit.end')}</span>
            )}
          </div>
        </>
      )}
    </section>
  );
}

const sameFilters = (a: AuditFilters, b: AuditFilters): boolean => a.user === b.user && a.namespace === b.namespace && a.job === b.job;

/** User, namespace, job (debounced, into the URL) and the time window. */
function AuditFiltersBar({ filters, onChange, since, onSinceChange }: { filters: AuditFilters; onChange: (filters: AuditFilters) => void; since: Since; onSinceChange: (since: Since) => void }) {
  const { t } = useI18n();
  const id = useId();
  const namespaces = useQuery({ ...namespacesQuery(), retry: false });
  const [draft, setDraft] = useState<Required<Record<keyof AuditFilters, string>>>({ user: filters.user ?? '', namespace: filters.namespace ?? '', job: filters.job ?? '' });
  // The filters this bar sent last: when the URL comes back with them, the fields (maybe typed on
  // meanwhile) stay as they are; other changes (a link, back/forward) are shown in the fields.
  const sent = useRef<AuditFilters>(undefined);
  useEffect(() => {
    if (sent.current && sameFilters(sent.current, filters)) return;
    setDraft({ user: filters.user ?? '', namespace: filters.namespace ?? '', job: filters.job ?? '' });
  }, [filters]);
  useEffect(() => {
    const next: AuditFilters = { user: draft.user.trim() || undefined, namespace: draft.namespace.trim() || undefined, job: draft.job.trim() || undefined };
    if (sameFilters(next, filters)) return undefined;
    const timer = setTimeout(() => {
      sent.current = next;
      onChange(next);
    }, FILTER_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draft, filters, onChange]);
  // Each field's accessible name says it filters (the shell's namespace switcher is "Namespace" too).
  const field = (name: keyof AuditFilters, label: string, accessibleName: string, extra: { list?: string; pattern: string; maxLength: number }) => (
    <span className="audit-filter">
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <input
        id={`${id}-${name}`}
        aria-label={accessibleName}
        type="search"
        size={14}
        value={draft[name]}
        onChange={(e) => setDraft((d) => ({ ...d, [name]: e.target.value }))}
        {...extra}
      />
    </span>
  );
  return (
    <div className="filters audit-filters" role="search" aria-label={t('audit.filtersLabel')}>
      {field('user', t('audit.filter.user'), t('audit.filter.byUser'), { pattern: '[A-Za-z0-9_.\\-]{1,64}', maxLength: 64 })}
      {field('namespace', t('audit.filter.namespace'), t('audit.filter.byNamespace'), { list: `${id}-namespaces`, pattern: '[A-Za-z0-9_.\\-]{1,128}', maxLength: 128 })}
      <datalist id={`${id}-namespaces`}>
        {(namespaces.data ?? []).map((ns) => (
          <option key={ns.name} value={ns.name} />
        ))}
      </datalist>
      {field('job', t('audit.filter.job'), t('audit.filter.byJob'), { pattern: '[A-Za-z0-9_\\-]{1,64}', maxLength: 64 })}
      <span className="audit-filter">
        <label htmlFor={`${id}-since`}>{t('audit.filter.since')}</label>
        <select id={`${id}-since`} value={since} onChange={(e) => onSinceChange(e.target.value as Since)}>
          {(Object.keys(SINCE_WINDOWS) as Since[]).map((s) => (
            <option key={s} value={s}>
              {t(`audit.since.${s}`)}
            </option>
          ))}
        </select>
      </span>
    </div>
  );
}

function EntryRows({ entry, filters, open, onToggle }: { entry: AuditEntryAnswer; filters: AuditFilters; open: boolean; onToggle: () => void }) {
  const { t, formatTime } = useI18n();
  const detailId = useId();
  const hasDetail = entry.before !== undefined || entry.after !== undefined || entry.details !== undefined;
  return (
    <Fragment>
      <tr className={open ? 'open' : undefined}>
        <td className="when">
          <time dateTime={new Date(entry.at).toISOString()} title={t('audit.exactTime', { epoch: entry.at, iso: new Date(entry.at).toISOString() })}>
            {formatTime(entry.at)}
          </time>
        </td>
        <td>
          {entry.user === null ? (
            <span className="muted">{t('audit.anonymous')}</span>
          ) : (
            <Link to="/audit" search={{ ...filters, user: entry.user }} title={t('audit.filterBy', { value: entry.user })}>
              {entry.user}
            </Link>
          )}
          {entry.via === 'token' && (
            <>
              {' '}
              <Badge tone="info" title={entry.tokenId ? t('audit.tokenId', { id: entry.tokenId }) : undefined}>
                {t('audit.viaToken')}
              </Badge>
            </>
          )}
        </td>
        <td>
          <code>{entry.ip}</code>
        </td>
        <td>
          <code className="action">{entry.action}</code>
        </td>
        <td className="where">
          {entry.namespace !== undefined && (
            <Link to="/audit" search={{ ...filters, namespace: entry.namespace }} title={t('audit.filterBy', { value: entry.namespace })}>
              {entry.namespace}
            </Link>
          )}
          {entry.job !== undefined && (
            <>
              {' / '}
              <Link to="/audit" search={{ ...filters, namespace: entry.namespace ?? filters.namespace, job: entry.job }} title={t('audit.filterBy', { value: entry.job })}>
                {entry.job}
              </Link>
            </>
          )}
          {entry.target !== undefined && (
            <>
              {entry.namespace !== undefined || entry.job !== undefined ? ' · ' : ''}
              <span className="target">{entry.target}</span>
            </>
          )}
          {entry.namespace === undefined && entry.job === undefined && entry.target === undefined && <span className="muted">—</span>}
        </td>
        <td className="toggle">
          {hasDetail && (
            <button type="button" className="link" aria-expanded={open} aria-controls={open ? detailId : undefined} aria-label={t(open ? 'audit.hideDetailsOf' : 'audit.showDetailsOf', { action: entry.action, id: entry.id })} onClick={onToggle}>
              {open ? t('audit.hideDetails') : t('audit.showDetails')}
            </button>
          )}
        </td>
      </tr>
      {hasDetail && open && (
        <tr className="detail-row" id={detailId}>
          <td colSpan={6}>
            <EntryDetail entry={entry} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** A JSON value as text (strings as they are). */
function text(value: unknown, pretty = false): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, pretty ? 2 : undefined) ?? String(value);
}

function Value({ value }: { value: unknown }) {
  const { t } = useI18n();
  if (value === undefined) return <span className="muted">{t('audit.absent')}</span>;
  return <code className="audit-value">{text(value)}</code>;
}

/** Before and after field by field (changed fields first, the rest folded), then the details. */
function EntryDetail({ entry }: { entry: AuditEntryAnswer }) {
  const { t } = useI18n();
  const changes = fieldChanges(entry.before, entry.after);
  const changed = changes?.filter((c) => c.changed) ?? [];
  const same = changes?.filter((c) => !c.changed) ?? [];
  return (
    <div className="audit-detail">
      {(entry.before !== undefined || entry.after !== undefined) &&
        (changes ? (
          <>
            {changed.length === 0 ? (
              <p className="muted">{t('audit.noChange')}</p>
            ) : (
              <FieldTable caption={t('audit.changedFields', { count: changed.length })} rows={changed} />
            )}
            {same.length > 0 && (
              <details>
                <summary>{t('audit.unchangedFields', { count: same.length })}</summary>
                <FieldTable caption={t('audit.unchangedFields', { count: same.length })} rows={same} />
              </details>
            )}
          </>
        ) : (
          <div className="audit-whole">
            <div>
              <h3>{t('audit.before')}</h3>
              <pre>{entry.before === undefined ? t('audit.absent') : text(entry.before, true)}</pre>
            </div>
            <div>
              <h3>{t('audit.after')}</h3>
              <pre>{entry.after === undefined ? t('audit.absent') : text(entry.after, true)}</pre>
            </div>
          </div>
        ))}
      {entry.details !== undefined && (
        <>
          <h3>{t('audit.details')}</h3>
          <pre>{text(entry.details, true)}</pre>
        </>
      )}
    </div>
  );
}

function FieldTable({ caption, rows }: { caption: string; rows: readonly { field: string; before: unknown; after: unknown; changed: boolean }[] }) {
  const { t } = useI18n();
  return (
    <table className="data field-diff">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{t('audit.field')}</th>
          <th scope="col">{t('audit.before')}</th>
          <th scope="col">{t('audit.after')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.field} className={r.changed ? 'changed' : undefined}>
            <th scope="row">
              <code>{r.field}</code>
            </th>
            <td className="before">
              <Value value={r.before} />
            </td>
            <td className="after">
              <Value value={r.after} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
