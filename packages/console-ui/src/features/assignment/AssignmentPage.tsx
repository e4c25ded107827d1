/**
 * `/ns/$namespace/assignment`: the allocator's last written map as an executors × jobs matrix of
 * shard counts — each executor's load and shards in a header row, each job's unassigned items
 * highlighted with the reason (the advice in the tooltip and in the list under the matrix), in a
 * column before the executors' so that it stays in view however many executors there are. A filter by job name and an "only
 * unassigned" switch; above {@link VIRTUALIZE_ABOVE} jobs only the rows in view are rendered.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ExecutorStateName } from '@orrery/console/api-types';
import { useDeferredValue, useId, useMemo, useRef, useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge, type Tone } from '../../ui/Badge';
import { Empty, ErrorState, Loading } from '../../ui/states';
import { executorsQuery } from '../executors/queries';
import { assignmentQuery, buildMatrix, type ExecutorColumn, type MatrixRow } from './queries';
import { reasonLabel } from './reasons';
import './assignment.css';

const route = getRouteApi('/_app/ns/$namespace/assignment');

/** More jobs than this (after the filter) and the rows are virtualised. */
export const VIRTUALIZE_ABOVE = 200;
/** A virtualised row's height, in px (the CSS keeps rows this high). */
export const MATRIX_ROW_PX = 36;

const STATE_TONE: Record<ExecutorStateName, Tone> = { online: 'ok', drained: 'warn', offline: 'muted' };

export function AssignmentPage() {
  const { namespace } = route.useParams();
  return <AssignmentView namespace={namespace} />;
}

export function AssignmentView({ namespace }: { namespace: string }) {
  const { t, formatTime } = useI18n();
  const id = useId();
  const assignment = useQuery(assignmentQuery(namespace));
  // The executors' states label the columns; the matrix stands without them.
  const executors = useQuery(executorsQuery(namespace));
  const [query, setQuery] = useState('');
  const [onlyUnassigned, setOnlyUnassigned] = useState(false);
  const deferredQuery = useDeferredValue(query);

  const states = useMemo(() => new Map((executors.data ?? []).map((e) => [e.name, e.state])), [executors.data]);
  const matrix = useMemo(() => {
    if (!assignment.data) return undefined;
    const live = (executors.data ?? []).filter((e) => e.state !== 'offline').map((e) => e.name);
    return buildMatrix(assignment.data, live);
  }, [assignment.data, executors.data]);
  const rows = useMemo(() => {
    if (!matrix) return [];
    const needle = deferredQuery.trim().toLowerCase();
    return matrix.rows.filter((r) => (!needle || r.job.job.toLowerCase().includes(needle)) && (!onlyUnassigned || r.unassignedCount > 0));
  }, [matrix, deferredQuery, onlyUnassigned]);

  if (assignment.isPending) return <Loading />;
  if (assignment.isError) return <ErrorState error={assignment.error} onRetry={() => void assignment.refetch()} />;
  const a = assignment.data;
  const m = matrix!;
  const filtered = query.trim() !== '' || onlyUnassigned;

  return (
    <section aria-labelledby="assignment-title" className="assignment-page">
      <div className="page-header">
        <h1 id="assignment-title">
          {t('assignment.title')} · {namespace}
        </h1>
        <p className="assignment-meta muted">
          {a.round === null ? (
            t('assignment.noRound')
          ) : (
            <>
              {t('assignment.round', { round: a.round })}
              {a.writtenAt !== null && (
                <>
                  {' · '}
                  {t('assignment.writtenAt')}{' '}
                  <time dateTime={new Date(a.writtenAt).toISOString()} title={String(a.writtenAt)}>
                    {formatTime(a.writtenAt)}
                  </time>
                </>
              )}
            </>
          )}
          {' · '}
          {t('assignment.members', { count: a.members.length })}
        </p>
      </div>
      {m.unassignedItems > 0 && (
        <div className="notice notice-error assignment-unassigned" role="status">
          {t('assignment.unassignedSummary', { items: m.unassignedItems, jobs: m.jobsWithUnassigned })}
          {!onlyUnassigned && (
            <button type="button" className="link" onClick={() => setOnlyUnassigned(true)}>
              {t('assignment.showUnassigned')}
            </button>
          )}
        </div>
      )}
      {a.jobs.length === 0 ? (
        <Empty>{t('assignment.empty')}</Empty>
      ) : (
        <>
          <div className="filters" role="search">
            <label htmlFor={`${id}-q`} className="visually-hidden">
              {t('assignment.filter')}
            </label>
            <input id={`${id}-q`} type="search" placeholder={t('assignment.filterPlaceholder')} value={query} onChange={(e) => setQuery(e.target.value)} />
            <label className="check" htmlFor={`${id}-only`}>
              <input id={`${id}-only`} type="checkbox" checked={onlyUnassigned} onChange={(e) => setOnlyUnassigned(e.target.checked)} />
              {t('assignment.onlyUnassigned')}
            </label>
            <span className="muted" aria-live="polite">
              {t('assignment.count', { shown: rows.length, total: m.rows.length })}
            </span>
          </div>
          {rows.length === 0 ? (
            <Empty
              action={
                filtered ? (
                  <button
                    type="button"
                    onClick={() => {
                      setQuery('');
                      setOnlyUnassigned(false);
                    }}
                  >
                    {t('assignment.clearFilter')}
                  </button>
                ) : undefined
              }
            >
              {t('assignment.emptyFiltered')}
            </Empty>
          ) : (
            <MatrixTable namespace={namespace} columns={m.columns} rows={rows} states={states} />
          )}
          {m.unassignedItems > 0 && <UnassignedList namespace={namespace} rows={m.rows} />}
        </>
      )}
    </section>
  );
}

function MatrixTable({ namespace, columns, rows, states }: { namespace: string; columns: ExecutorColumn[]; rows: MatrixRow[]; states: ReadonlyMap<string, ExecutorStateName> }) {
  const { t } = useI18n();
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtual = rows.length > VIRTUALIZE_ABOVE;
  const virtualizer = useVirtualizer({
    count: rows.length,
    enabled: virtual,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => MATRIX_ROW_PX,
    overscan: 12,
    initialRect: { width: 1200, height: 800 },
  });
  const items = virtual ? virtualizer.getVirtualItems() : [];
  const shown = virtual ? items.map((item) => ({ row: rows[item.index]!, index: item.index })) : rows.map((row, index) => ({ row, index }));
  const paddingTop = virtual ? (items[0]?.start ?? 0) : 0;
  const paddingBottom = virtual && items.length > 0 ? virtualizer.getTotalSize() - items.at(-1)!.end : 0;
  const span = columns.length + 3;
  const totalShards = columns.reduce((sum, c) => sum + c.shards, 0);
  const totalUnassigned = rows.reduce((sum, r) => sum + r.unassignedCount, 0);

  return (
    <div className={`matrix-scroll${virtual ? ' virtual' : ''}`} ref={scrollRef} role="region" aria-label={t('assignment.matrixLabel')} tabIndex={0}>
      <table className="data matrix" aria-rowcount={rows.length + 2}>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col" className="job-col">
              {t('assignment.col.job')}
            </th>
            <th scope="col" className="num total-col">
              {t('assignment.col.shards')}
            </th>
            <th scope="col" className="unassigned-col">
              {t('assignment.col.unassigned')}
            </th>
            {columns.map((c) => {
              const state = states.get(c.name);
              return (
                <th key={c.name} scope="col" className="num exec-col" title={state ? `${c.name} · ${t(`executorState.${state}`)}` : c.name}>
                  <span className="exec-name">{c.name}</span>
                  {state && state !== 'online' && (
                    <Badge tone={STATE_TONE[state]}>{t(`executorState.${state}`)}</Badge>
                  )}
                </th>
              );
            })}
          </tr>
          <tr className="load-row" aria-rowindex={2}>
            <th scope="row" className="job-col">
              {t('assignment.loadRow')}
            </th>
            <td className="num total-col">{totalShards}</td>
            <td className={`unassigned-col${totalUnassigned > 0 ? ' unassigned' : ''}`}>{totalUnassigned > 0 ? totalUnassigned : ''}</td>
            {columns.map((c) => (
              <td key={c.name} className="num" aria-label={t('assignment.loadOf', { name: c.name, load: c.load, shards: c.shards })}>
                <strong>{c.load}</strong>
                <small className="muted">{t('assignment.shardsShort', { count: c.shards })}</small>
              </td>
            ))}
          </tr>
        </thead>
        <tbody>
          {paddingTop > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={span} style={{ height: paddingTop }} />
            </tr>
          )}
          {shown.map(({ row, index }) => (
            <MatrixRowView key={row.job.job} namespace={namespace} row={row} columns={columns} index={index} />
          ))}
          {paddingBottom > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={span} style={{ height: paddingBottom }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function MatrixRowView({ namespace, row, columns, index }: { namespace: string; row: MatrixRow; columns: ExecutorColumn[]; index: number }) {
  const { t } = useI18n();
  const { job } = row;
  const total = row.assigned + row.unassignedCount;
  const unassignedTitle = row.unassigned.map((u) => `${reasonLabel(t, u.reason)} (${t('assignment.items', { items: u.items.join(', ') })})${u.advice ? `: ${u.advice}` : ''}`).join('\n');
  return (
    <tr aria-rowindex={index + 3} className={[row.unassignedCount > 0 ? 'has-unassigned' : '', job.enabled === false ? 'disabled' : ''].filter(Boolean).join(' ') || undefined}>
      <th scope="row" className="job-col">
        <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job: job.job }} className="job-link" title={job.job}>
          {job.job}
        </Link>
        {job.problem !== undefined && (
          <Badge tone="bad" title={job.problem}>
            {t('assignment.problem')}
          </Badge>
        )}
        {job.enabled === false && <Badge tone="muted">{t('jobState.disabled')}</Badge>}
        {job.epoch === null && job.problem === undefined && job.enabled !== false && (
          <Badge tone="info" title={t('assignment.notWrittenHelp')}>
            {t('assignment.notWritten')}
          </Badge>
        )}
      </th>
      <td className="num total-col">{total}</td>
      <td className={`unassigned-col${row.unassignedCount > 0 ? ' unassigned' : ''}`} title={unassignedTitle || undefined}>
        {row.unassigned.length > 0 && (
          <span className="unassigned-reasons">
            {row.unassigned.map((u) => (
              <span key={u.reason} className="unassigned-reason">
                <strong>{u.items.length}</strong> {reasonLabel(t, u.reason)}
              </span>
            ))}
          </span>
        )}
      </td>
      {row.counts.map((count, i) => {
        const column = columns[i]!;
        const items = job.items[column.name] ?? [];
        return (
          <td key={column.name} className={`num${count > 0 ? ' held' : ''}`} title={count > 0 ? `${column.name}: ${t('assignment.items', { items: items.join(', ') })}` : undefined}>
            {count > 0 ? count : ''}
          </td>
        );
      })}
    </tr>
  );
}

/** The most jobs the unassigned list shows (the matrix has them all). */
const MAX_UNASSIGNED_JOBS = 100;

/** Every job with unassigned items: the items, the reason and the server's advice, as text (not only tooltips). */
function UnassignedList({ namespace, rows }: { namespace: string; rows: readonly MatrixRow[] }) {
  const { t } = useI18n();
  const jobs = rows.filter((r) => r.unassignedCount > 0);
  return (
    <details className="unassigned-list">
      <summary>{t('assignment.whyUnassigned', { count: jobs.length })}</summary>
      <ul>
        {jobs.slice(0, MAX_UNASSIGNED_JOBS).map((r) =>
          r.unassigned.map((u) => (
            <li key={`${r.job.job}/${u.reason}`}>
              <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job: r.job.job }}>
                {r.job.job}
              </Link>{' '}
              <span className="muted">{t('assignment.items', { items: u.items.join(', ') })}</span> — <strong>{reasonLabel(t, u.reason)}</strong>
              {u.advice && <p className="advice">{u.advice}</p>}
            </li>
          )),
        )}
      </ul>
      {jobs.length > MAX_UNASSIGNED_JOBS && <p className="muted">{t('assignment.moreUnassigned', { count: jobs.length - MAX_UNASSIGNED_JOBS })}</p>}
    </details>
  );
}
