/**
 * The jobs table: TanStack Table for the columns and the row selection, TanStack Virtual for the
 * rows — only the rows in view (and a few around) are in the DOM, so 10,000 jobs scroll smoothly.
 * Rows are {@link ROW_HEIGHT_PX} high (fixed: no measuring). Near the end of what is loaded it
 * asks for the next page (`onNeedMore`).
 */
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type OnChangeFn, type RowSelectionState } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from '@tanstack/react-router';
import { useEffect, useMemo, useRef } from 'react';
import type { JobListItem, ListedOutcome } from '../../api/types';
import { useI18n, type I18n } from '../../i18n/I18nProvider';
import { Badge, type Tone } from '../../ui/Badge';
import type { JobAction } from './queries';

/** A row's height, in px (the CSS keeps rows exactly this high). */
export const ROW_HEIGHT_PX = 40;
/** Rows rendered beyond the visible ones, each side. */
export const OVERSCAN_ROWS = 12;
/** Ask for the next page when this few loaded rows are left below the view. */
export const PREFETCH_ROWS = 100;

export interface JobsTableProps {
  namespace: string;
  jobs: readonly JobListItem[];
  /** Whether the user may enable, disable and run jobs here (selection and actions shown only then). */
  canOperate: boolean;
  rowSelection: RowSelectionState;
  onRowSelectionChange: OnChangeFn<RowSelectionState>;
  onAction: (job: string, action: JobAction) => void;
  /** Names of jobs with an action in flight (their buttons are disabled). */
  busy: ReadonlySet<string>;
  hasMore: boolean;
  onNeedMore: () => void;
}

/** A job's state badge (pure). */
export function jobStateBadge(job: JobListItem): { key: 'broken' | 'disabled' | 'running' | 'failing' | 'enabled'; tone: Tone } {
  if (job.broken) return { key: 'broken', tone: 'bad' };
  if (!job.enabled) return { key: 'disabled', tone: 'muted' };
  if (job.summary.running > 0) return { key: 'running', tone: 'info' };
  if (job.summary.failing > 0) return { key: 'failing', tone: 'bad' };
  return { key: 'enabled', tone: 'ok' };
}

const OUTCOME_TONE: Record<ListedOutcome['status'], Tone> = { succeeded: 'ok', failed: 'bad', 'timed-out': 'warn', aborted: 'muted' };

function columns(i18n: I18n, namespace: string, props: Pick<JobsTableProps, 'canOperate' | 'onAction' | 'busy'>): ColumnDef<JobListItem>[] {
  const { t, formatTime } = i18n;
  const cols: ColumnDef<JobListItem>[] = [];
  if (props.canOperate) {
    cols.push({
      id: 'select',
      size: 44,
      header: ({ table }) => (
        <input
          type="checkbox"
          aria-label={t('jobs.selectAll')}
          checked={table.getIsAllRowsSelected()}
          ref={(el) => {
            if (el) el.indeterminate = table.getIsSomeRowsSelected();
          }}
          onChange={table.getToggleAllRowsSelectedHandler()}
        />
      ),
      cell: ({ row }) => <input type="checkbox" aria-label={t('jobs.selectRow', { name: row.original.name })} checked={row.getIsSelected()} disabled={!row.getCanSelect()} onChange={row.getToggleSelectedHandler()} />,
    });
  }
  cols.push(
    {
      id: 'name',
      size: 260,
      header: t('jobs.col.name'),
      cell: ({ row: { original: job } }) => (
        <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job: job.name }} className="job-name" title={job.broken ? t('jobs.broken', { problem: job.problem }) : job.description || job.name}>
          {job.name}
        </Link>
      ),
    },
    { id: 'type', size: 70, header: t('jobs.col.type'), cell: ({ row: { original: job } }) => (job.broken ? '' : job.type) },
    {
      id: 'cron',
      size: 150,
      header: t('jobs.col.cron'),
      cell: ({ row: { original: job } }) => (job.broken ? '' : job.cron === null ? <span className="muted">{t('jobs.passive')}</span> : <code>{job.cron}</code>),
    },
    {
      id: 'nextFire',
      size: 190,
      header: t('jobs.col.nextFire'),
      cell: ({ row: { original: job } }) =>
        job.broken || job.nextFireTime === null ? (
          <span className="muted">{t('jobs.noNextFire')}</span>
        ) : (
          <time dateTime={new Date(job.nextFireTime).toISOString()} title={t('jobs.nextFireZone', { time: formatTime(job.nextFireTime, job.timeZone), zone: job.timeZone })}>
            {formatTime(job.nextFireTime)}
          </time>
        ),
    },
    {
      id: 'state',
      size: 100,
      header: t('jobs.col.state'),
      cell: ({ row: { original: job } }) => {
        const badge = jobStateBadge(job);
        return (
          <Badge tone={badge.tone} title={job.broken ? t('jobs.broken', { problem: job.problem }) : undefined}>
            {t(`jobState.${badge.key}`)}
          </Badge>
        );
      },
    },
    {
      id: 'outcomes',
      size: 120,
      header: t('jobs.col.outcomes'),
      cell: ({ row: { original: job } }) =>
        job.broken ? null : (
          <span className="outcomes">
            {job.lastOutcomes.map((o) => {
              const label = t('outcome.item', { item: o.item, status: t(`outcome.${o.status}`), message: o.message || formatTime(o.endedAt) });
              return <span key={o.item} className={`dot dot-${OUTCOME_TONE[o.status]}`} title={label} role="img" aria-label={label} />;
            })}
          </span>
        ),
    },
  );
  if (props.canOperate) {
    cols.push({
      id: 'actions',
      size: 190,
      header: t('jobs.col.actions'),
      cell: ({ row: { original: job } }) =>
        job.broken ? null : (
          <span className="row-actions" role="group" aria-label={t('jobs.rowActions', { name: job.name })}>
            {job.enabled ? (
              <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'disable')}>
                {t('jobs.disable')}
              </button>
            ) : (
              <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'enable')}>
                {t('jobs.enable')}
              </button>
            )}
            {job.enabled && (
              <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'run')}>
                {t('jobs.runNow')}
              </button>
            )}
          </span>
        ),
    });
  }
  return cols;
}

export function JobsTable(props: JobsTableProps) {
  const i18n = useI18n();
  const { namespace, jobs, canOperate, rowSelection, onRowSelectionChange, onAction, busy, hasMore, onNeedMore } = props;
  const cols = useMemo(() => columns(i18n, namespace, { canOperate, onAction, busy }), [i18n, namespace, canOperate, onAction, busy]);
  const table = useReactTable({
    data: jobs as JobListItem[],
    columns: cols,
    getRowId: (job) => job.name,
    getCoreRowModel: getCoreRowModel(),
    state: { rowSelection },
    enableRowSelection: canOperate,
    onRowSelectionChange,
  });
  const { rows } = table.getRowModel();
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT_PX,
    overscan: OVERSCAN_ROWS,
    // Before the first layout (and in test DOMs, which have none): a screenful.
    initialRect: { width: 1200, height: 800 },
  });
  const items = virtualizer.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    if (hasMore && last >= rows.length - PREFETCH_ROWS) onNeedMore();
  }, [hasMore, last, rows.length, onNeedMore]);
  const paddingTop = items[0]?.start ?? 0;
  const paddingBottom = items.length > 0 ? virtualizer.getTotalSize() - items.at(-1)!.end : 0;
  const columnCount = table.getVisibleLeafColumns().length;

  return (
    <div className="jobs-scroll" ref={scrollRef} tabIndex={0} aria-label={i18n.t('jobs.title')} role="region">
      <table className="data jobs-table" aria-rowcount={rows.length + 1}>
        <colgroup>
          {table.getVisibleLeafColumns().map((c) => (
            <col key={c.id} style={{ width: c.getSize() }} />
          ))}
        </colgroup>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id} aria-rowindex={1}>
              {group.headers.map((header) => (
                <th key={header.id} scope="col">
                  {flexRender(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {paddingTop > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={columnCount} style={{ height: paddingTop }} />
            </tr>
          )}
          {items.map((item) => {
            const row = rows[item.index]!;
            return (
              <tr key={row.id} aria-rowindex={item.index + 2} aria-selected={canOperate ? row.getIsSelected() : undefined} className={row.getIsSelected() ? 'selected' : undefined}>
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                ))}
              </tr>
            );
          })}
          {paddingBottom > 0 && (
            <tr aria-hidden="true" className="spacer">
              <td colSpan={columnCount} style={{ height: paddingBottom }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
