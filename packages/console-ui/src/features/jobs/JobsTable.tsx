/**
 * The jobs table: TanStack Table for the columns and the row selection, TanStack Virtual for the
 * rows — only the rows in view (and a few around) are in the DOM, so 10,000 jobs scroll smoothly.
 * Rows are {@link ROW_HEIGHT_PX} high (fixed: no measuring). Near the end of what is loaded it
 * asks for the next page (`onNeedMore`). The name column takes the width the others leave.
 * Operators get enable / disable / run now / stop per row; owners a "More" menu (edit, copy, delete).
 */
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type OnChangeFn, type RowSelectionState } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from '@tanstack/react-router';
import { useEffect, useMemo, useRef } from 'react';
import type { JobListItem, ListedOutcome } from '../../api/types';
import { useI18n, type I18n } from '../../i18n/I18nProvider';
import { Badge, type Tone } from '../../ui/Badge';
import { MenuButton } from './MenuButton';
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
  /** Whether the user may edit, copy and delete jobs here (the row's "More" menu shown only then). */
  canOwn?: boolean;
  /** An owner's tool on one job (opens the editor or a dialog). */
  onTool?: (job: string, tool: JobTool) => void;
  rowSelection: RowSelectionState;
  onRowSelectionChange: OnChangeFn<RowSelectionState>;
  onAction: (job: string, action: JobAction) => void;
  /** Names of jobs with an action in flight (their buttons are disabled). */
  busy: ReadonlySet<string>;
  hasMore: boolean;
  onNeedMore: () => void;
}

/** An owner's tools on one job. */
export type JobTool = 'edit' | 'copy' | 'delete';

/** The width the name column gets at least, in px (it takes what the other columns leave). */
export const NAME_MIN_PX = 110;

/** Columns whose width the table (name) or the stylesheet (next fire) sets, not their size. */
const FLEXIBLE_COLUMNS = new Set(['name', 'nextFire']);

/** A job's state badge (pure). */
export function jobStateBadge(job: JobListItem): { key: 'broken' | 'disabled' | 'running' | 'failing' | 'enabled'; tone: Tone } {
  if (job.broken) return { key: 'broken', tone: 'bad' };
  if (!job.enabled) return { key: 'disabled', tone: 'muted' };
  if (job.summary.running > 0) return { key: 'running', tone: 'info' };
  if (job.summary.failing > 0) return { key: 'failing', tone: 'bad' };
  return { key: 'enabled', tone: 'ok' };
}

const OUTCOME_TONE: Record<ListedOutcome['status'], Tone> = { succeeded: 'ok', failed: 'bad', 'timed-out': 'warn', aborted: 'muted' };

type ColumnProps = Pick<JobsTableProps, 'canOperate' | 'canOwn' | 'onAction' | 'onTool' | 'busy'>;

function columns(i18n: I18n, namespace: string, props: ColumnProps): ColumnDef<JobListItem>[] {
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
      size: NAME_MIN_PX,
      header: t('jobs.col.name'),
      cell: ({ row: { original: job } }) => (
        <Link to="/ns/$namespace/jobs/$job" params={{ namespace, job: job.name }} className="job-name" title={job.broken ? t('jobs.broken', { problem: job.problem }) : job.description || job.name}>
          {job.name}
        </Link>
      ),
    },
    { id: 'type', size: 60, header: t('jobs.col.type'), cell: ({ row: { original: job } }) => (job.broken ? '' : job.type) },
    {
      id: 'cron',
      size: 130,
      header: t('jobs.col.cron'),
      cell: ({ row: { original: job } }) => (job.broken ? '' : job.cron === null ? <span className="muted">{t('jobs.passive')}</span> : <code>{job.cron}</code>),
    },
    {
      id: 'nextFire',
      size: 180,
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
      size: 96,
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
      size: 90,
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
      size: props.canOwn ? 236 : 172,
      header: t('jobs.col.actions'),
      cell: ({ row: { original: job } }) => (
        <span className="row-actions" role="group" aria-label={t('jobs.rowActions', { name: job.name })}>
          {!job.broken && (job.enabled ? (
              <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'disable')}>
                {t('jobs.disable')}
              </button>
            ) : (
              <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'enable')}>
                {t('jobs.enable')}
              </button>
            ))}
          {/* A running job offers stop in place of run now (the row stays narrow). */}
          {!job.broken && job.enabled && job.summary.running === 0 && (
            <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'run')}>
              {t('jobs.runNow')}
            </button>
          )}
          {!job.broken && job.summary.running > 0 && (
            <button type="button" disabled={props.busy.has(job.name)} onClick={() => props.onAction(job.name, 'stop')}>
              {t('jobs.stop')}
            </button>
          )}
          {props.canOwn && props.onTool && <OwnerMenu job={job} i18n={i18n} onTool={props.onTool} />}
        </span>
      ),
    });
  }
  return cols;
}

function OwnerMenu({ job, i18n: { t }, onTool }: { job: JobListItem; i18n: I18n; onTool: (job: string, tool: JobTool) => void }) {
  return (
    <MenuButton
      label={t('jobs.more')}
      accessibleName={t('jobs.moreFor', { name: job.name })}
      items={[
        { label: t('jobs.edit'), onSelect: () => onTool(job.name, 'edit') },
        // A broken job has nothing to copy (the server refuses it).
        ...(job.broken ? [] : [{ label: t('jobs.copy'), onSelect: () => onTool(job.name, 'copy') }]),
        { label: t('jobs.delete'), onSelect: () => onTool(job.name, 'delete'), danger: true },
      ]}
    />
  );
}

export function JobsTable(props: JobsTableProps) {
  const i18n = useI18n();
  const { namespace, jobs, canOperate, canOwn = false, rowSelection, onRowSelectionChange, onAction, onTool, busy, hasMore, onNeedMore } = props;
  const cols = useMemo(() => columns(i18n, namespace, { canOperate, canOwn, onAction, onTool, busy }), [i18n, namespace, canOperate, canOwn, onAction, onTool, busy]);
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
      <table className="data jobs-table" aria-rowcount={rows.length + 1} style={{ minWidth: table.getVisibleLeafColumns().reduce((sum, c) => sum + c.getSize(), 0) }}>
        <colgroup>
          {table.getVisibleLeafColumns().map((c) => (
            // The name column takes what the others leave (at least its size); the next fire time's
            // width is the stylesheet's (wider on wide windows, where the whole time fits).
            <col key={c.id} className={`col-${c.id}`} style={FLEXIBLE_COLUMNS.has(c.id) ? undefined : { width: c.getSize() }} />
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
