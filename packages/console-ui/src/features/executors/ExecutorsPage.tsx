/**
 * `/ns/$namespace/executors`: every executor the namespace knows — state, load, shards, version,
 * host, tags, handlers — with drain / undrain for operators and remove (offline ones) for owners.
 * Drain shows first what it would do: the allocator's preview of the moves it causes and the loads
 * after (`POST …/assignment/preview`), and drains only once the user confirms.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import type { AssignmentPreviewAnswer, ExecutorStateName, ExecutorSummaryAnswer } from '@orrery/console/api-types';
import { useCallback, useState } from 'react';
import { EXECUTOR_STATES } from '../../api/types';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge, type Tone } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { reasonLabel } from '../assignment/reasons';
import { nsKeys } from '../namespaces/queries';
import { Dialog } from '../../ui/Dialog';
import { executorKeys, executorsQuery, groupMoves, itemsText, previewAssignment, removeExecutor, setDrained } from './queries';
import './executors.css';

const route = getRouteApi('/_app/ns/$namespace/executors');

const STATE_TONE: Record<ExecutorStateName, Tone> = { online: 'ok', drained: 'warn', offline: 'muted' };

/** The dialog open on the page. */
type Open = { kind: 'drain'; executor: string } | { kind: 'remove'; executor: string };

export function ExecutorsPage() {
  const { namespace } = route.useParams();
  return <ExecutorsView namespace={namespace} />;
}

export function ExecutorsView({ namespace }: { namespace: string }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const { can } = useSession();
  const canOperate = can('operate', namespace);
  const canOwn = can('own', namespace);
  const queryClient = useQueryClient();
  const executors = useQuery(executorsQuery(namespace));
  const [open, setOpen] = useState<Open>();
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string }>();
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());

  const invalidate = useCallback(
    () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: executorKeys.all(namespace) }),
        queryClient.invalidateQueries({ queryKey: [...nsKeys.namespace(namespace), 'assignment'] }),
        queryClient.invalidateQueries({ queryKey: [...nsKeys.namespace(namespace), 'stats'] }),
        queryClient.invalidateQueries({ queryKey: nsKeys.list() }),
      ]),
    [queryClient, namespace],
  );

  const preview = useMutation({ mutationFn: (executor: string) => previewAssignment(namespace, { drain: [executor] }) });
  const drain = useMutation({
    mutationFn: (executor: string) => setDrained(namespace, executor, true),
    onSuccess: (answer) => {
      setOpen(undefined);
      setNotice({ tone: 'info', text: answer.changed ? t('executors.drained', { name: answer.executor }) : t('executors.alreadyDrained', { name: answer.executor }) });
    },
    onSettled: () => void invalidate(),
  });
  const undrain = useMutation({
    mutationFn: (executor: string) => setDrained(namespace, executor, false),
    onMutate: (executor) => setBusy((b) => new Set(b).add(executor)),
    onSettled: (answer, error, executor) => {
      setBusy((b) => {
        const next = new Set(b);
        next.delete(executor);
        return next;
      });
      if (error) setNotice({ tone: 'error', text: message(error) });
      else if (answer) setNotice({ tone: 'info', text: answer.changed ? t('executors.undrained', { name: executor }) : t('executors.alreadyUndrained', { name: executor }) });
      void invalidate();
    },
  });
  const remove = useMutation({
    mutationFn: (executor: string) => removeExecutor(namespace, executor),
    onSuccess: (_answer, executor) => {
      setOpen(undefined);
      setNotice({ tone: 'info', text: t('executors.removed', { name: executor }) });
    },
    onSettled: () => void invalidate(),
  });

  const startDrain = (executor: string) => {
    drain.reset();
    setNotice(undefined);
    setOpen({ kind: 'drain', executor });
    preview.mutate(executor);
  };
  const startRemove = (executor: string) => {
    remove.reset();
    setNotice(undefined);
    setOpen({ kind: 'remove', executor });
  };
  const close = () => {
    setOpen(undefined);
    preview.reset();
  };

  const list = executors.data ?? [];
  const counts = EXECUTOR_STATES.map((state) => ({ state, count: list.filter((e) => e.state === state).length }));
  const showActions = canOperate || canOwn;

  return (
    <section aria-labelledby="executors-title" className="executors-page">
      <div className="page-header">
        <h1 id="executors-title">
          {t('executors.title')} · {namespace}
        </h1>
        {executors.isSuccess && list.length > 0 && (
          <p className="executor-counts" aria-label={t('executors.countsLabel')}>
            {counts.map(({ state, count }) => (
              <span key={state}>
                <span className={`dot dot-${STATE_TONE[state]}`} aria-hidden="true" /> {t(`executorState.${state}`)} <strong>{count}</strong>
              </span>
            ))}
          </p>
        )}
      </div>
      {notice && <Notice tone={notice.tone}>{notice.text}</Notice>}
      {executors.isPending ? (
        <Loading />
      ) : executors.isError ? (
        <ErrorState error={executors.error} onRetry={() => void executors.refetch()} />
      ) : list.length === 0 ? (
        <Empty>{t('executors.empty', { namespace })}</Empty>
      ) : (
        <div className="table-scroll" role="region" aria-labelledby="executors-title" tabIndex={0}>
          <table className="data executors-table">
            <thead>
              <tr>
                <th scope="col">{t('executors.col.name')}</th>
                <th scope="col">{t('executors.col.state')}</th>
                <th scope="col" className="num">
                  {t('executors.col.load')}
                </th>
                <th scope="col" className="num">
                  {t('executors.col.shards')}
                </th>
                <th scope="col">{t('executors.col.version')}</th>
                <th scope="col">{t('executors.col.host')}</th>
                <th scope="col">{t('executors.col.tags')}</th>
                <th scope="col">{t('executors.col.handlers')}</th>
                {showActions && <th scope="col">{t('executors.col.actions')}</th>}
              </tr>
            </thead>
            <tbody>
              {list.map((e) => (
                <ExecutorRow
                  key={e.name}
                  executor={e}
                  canOperate={canOperate}
                  canOwn={canOwn}
                  showActions={showActions}
                  busy={busy.has(e.name) || (open?.executor === e.name && (drain.isPending || remove.isPending))}
                  onDrain={() => startDrain(e.name)}
                  onUndrain={() => undrain.mutate(e.name)}
                  onRemove={() => startRemove(e.name)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === 'drain' && (
        <Dialog
          title={t('executors.drain.title', { name: open.executor })}
          size="wide"
          onClose={close}
          busy={drain.isPending}
          actions={
            <>
              <button type="button" onClick={close} disabled={drain.isPending}>
                {t('executors.cancel')}
              </button>
              <button type="button" className="primary" disabled={preview.isPending || drain.isPending} onClick={() => drain.mutate(open.executor)}>
                {drain.isPending ? t('executors.drain.draining') : t('executors.drain.confirm')}
              </button>
            </>
          }
        >
          <p>{t('executors.drain.intro', { name: open.executor })}</p>
          {preview.isPending ? (
            <Loading label={t('executors.drain.previewing')} />
          ) : preview.isError ? (
            <div className="notice notice-error" role="alert">
              <p>{t('executors.drain.previewFailed', { message: message(preview.error) })}</p>
              <button type="button" onClick={() => preview.mutate(open.executor)}>
                {t('state.retry')}
              </button>
            </div>
          ) : preview.data ? (
            <DrainPreview executor={open.executor} preview={preview.data} />
          ) : null}
          {drain.isError && (
            <p className="field-error" role="alert">
              {message(drain.error)}
            </p>
          )}
        </Dialog>
      )}
      {open?.kind === 'remove' && (
        <Dialog
          title={t('executors.remove.title', { name: open.executor })}
          role="alertdialog"
          onClose={close}
          busy={remove.isPending}
          actions={
            <>
              <button type="button" onClick={close} disabled={remove.isPending}>
                {t('executors.cancel')}
              </button>
              <button type="button" className="primary danger" disabled={remove.isPending} onClick={() => remove.mutate(open.executor)}>
                {remove.isPending ? t('executors.remove.removing') : t('executors.remove.confirm')}
              </button>
            </>
          }
        >
          <p>{t('executors.remove.intro', { name: open.executor })}</p>
          {remove.isError && (
            <p className="field-error" role="alert">
              {message(remove.error)}
            </p>
          )}
        </Dialog>
      )}
    </section>
  );
}

interface RowProps {
  executor: ExecutorSummaryAnswer;
  canOperate: boolean;
  canOwn: boolean;
  showActions: boolean;
  busy: boolean;
  onDrain: () => void;
  onUndrain: () => void;
  onRemove: () => void;
}

function ExecutorRow({ executor: e, canOperate, canOwn, showActions, busy, onDrain, onUndrain, onRemove }: RowProps) {
  const { t, formatTime } = useI18n();
  return (
    <tr className={e.state === 'offline' ? 'offline' : undefined}>
      <th scope="row">
        <span className="executor-name">{e.name}</span>
        {e.problem && (
          <small className="executor-problem bad" role="note">
            {t('executors.problem', { problem: e.problem })}
          </small>
        )}
      </th>
      <td>
        <span className="state-cell">
          <Badge tone={STATE_TONE[e.state]}>{t(`executorState.${e.state}`)}</Badge>
          {e.leaving && (
            <Badge tone="info" title={t('executors.leavingHelp')}>
              {t('executors.leaving')}
            </Badge>
          )}
          {e.state === 'offline' && e.drained && <small className="muted">{t('executors.drainKept')}</small>}
        </span>
      </td>
      <td className="num">{e.load}</td>
      <td className="num">{e.shards}</td>
      <td>{e.version ? <code>{e.version}</code> : <span className="muted">—</span>}</td>
      <td className="host-cell">
        {e.host ? <span className="host">{e.host}</span> : <span className="muted">—</span>}
        {e.pid !== null && <small className="muted">{t('executors.pid', { pid: e.pid })}</small>}
        {e.startedAt !== null && (
          <small className="muted started">
            {t('executors.started')}{' '}
            <time dateTime={new Date(e.startedAt).toISOString()} title={String(e.startedAt)}>
              {formatTime(e.startedAt)}
            </time>
          </small>
        )}
      </td>
      <td>
        <Chips values={e.tags} label={t('executors.tagsOf', { name: e.name })} />
      </td>
      <td>
        <Chips values={e.handlers} label={t('executors.handlersOf', { name: e.name })} />
      </td>
      {showActions && (
        <td>
          <span className="row-actions" role="group" aria-label={t('executors.rowActions', { name: e.name })}>
            {canOperate && !e.drained && (
              <button type="button" disabled={busy} onClick={onDrain}>
                {t('executors.drain')}
              </button>
            )}
            {canOperate && e.drained && (
              <button type="button" disabled={busy} onClick={onUndrain}>
                {t('executors.undrain')}
              </button>
            )}
            {canOwn && e.state === 'offline' && (
              <button type="button" className="danger" disabled={busy} onClick={onRemove}>
                {t('executors.remove')}
              </button>
            )}
          </span>
        </td>
      )}
    </tr>
  );
}

/** Tags or handlers: a few as chips, the rest counted (all of them in the title). */
function Chips({ values, label }: { values: readonly string[]; label: string }) {
  const { t } = useI18n();
  if (values.length === 0) return <span className="muted">—</span>;
  const shown = values.slice(0, 4);
  return (
    <ul className="chips" aria-label={label} title={values.join(', ')}>
      {shown.map((v) => (
        <li key={v} className="chip">
          {v}
        </li>
      ))}
      {values.length > shown.length && <li className="chip chip-more">{t('executors.more', { count: values.length - shown.length })}</li>}
    </ul>
  );
}

/** The most move groups listed in the drain dialog (the rest are counted). */
const MAX_GROUPS = 200;

/** What draining `executor` would do: the moves by job, unassigned items, the loads that change, the notes. */
function DrainPreview({ executor, preview }: { executor: string; preview: AssignmentPreviewAnswer }) {
  const { t } = useI18n();
  const groups = groupMoves(preview.moves);
  const unassigned = preview.moves.filter((m) => m.to === null).length;
  const loads = preview.loads.filter((l) => l.executor === executor || l.before !== l.after || l.shardsBefore !== l.shardsAfter);
  const unchanged = preview.loads.length - loads.length;
  return (
    <div className="drain-preview">
      {preview.moves.length === 0 ? (
        <p>
          <strong>{t('executors.drain.noMoves', { name: executor })}</strong>
        </p>
      ) : (
        <>
          <h3>{t('executors.drain.moves', { count: preview.moves.length })}</h3>
          {unassigned > 0 && (
            <p className="notice notice-error" role="note">
              {t('executors.drain.unassigned', { count: unassigned })}
            </p>
          )}
          <table className="data moves-table">
            <caption className="visually-hidden">{t('executors.drain.movesCaption', { name: executor })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('executors.drain.job')}</th>
                <th scope="col">{t('executors.drain.items')}</th>
                <th scope="col">{t('executors.drain.from')}</th>
                <th scope="col">{t('executors.drain.to')}</th>
              </tr>
            </thead>
            <tbody>
              {groups.slice(0, MAX_GROUPS).map((g) => (
                <tr key={JSON.stringify([g.job, g.from, g.to, g.why])}>
                  <th scope="row">{g.job}</th>
                  <td title={g.items.join(', ')}>
                    <span className="muted">{t('executors.drain.itemCount', { count: g.items.length })}</span> {itemsText(g.items)}
                  </td>
                  <td>{g.from ?? <span className="muted">{t('executors.drain.nobody')}</span>}</td>
                  <td>
                    {g.to ?? (
                      <Badge tone="bad" title={g.why}>
                        {t('executors.drain.unassignedTo', { reason: g.why ? reasonLabel(t, g.why) : '?' })}
                      </Badge>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {groups.length > MAX_GROUPS && <p className="muted">{t('executors.drain.moreGroups', { count: groups.length - MAX_GROUPS })}</p>}
        </>
      )}
      {loads.length > 0 && (
        <>
          <h3>{t('executors.drain.loads')}</h3>
          <table className="data loads-table">
            <caption className="visually-hidden">{t('executors.drain.loadsCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('executors.drain.executor')}</th>
                <th scope="col" className="num">
                  {t('executors.drain.loadBefore')}
                </th>
                <th scope="col" className="num">
                  {t('executors.drain.loadAfter')}
                </th>
                <th scope="col" className="num">
                  {t('executors.drain.shardsBefore')}
                </th>
                <th scope="col" className="num">
                  {t('executors.drain.shardsAfter')}
                </th>
              </tr>
            </thead>
            <tbody>
              {loads.map((l) => (
                <tr key={l.executor} className={l.executor === executor ? 'target' : undefined}>
                  <th scope="row">{l.executor}</th>
                  <td className="num">{l.before}</td>
                  <td className={`num${l.after > l.before ? ' up' : l.after < l.before ? ' down' : ''}`}>{l.after}</td>
                  <td className="num">{l.shardsBefore}</td>
                  <td className="num">{l.shardsAfter}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {unchanged > 0 && <p className="muted">{t('executors.drain.unchangedLoads', { count: unchanged })}</p>}
        </>
      )}
      {preview.notes.length > 0 && (
        <>
          <h3>{t('executors.drain.notes')}</h3>
          <ul className="preview-notes">
            {preview.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </>
      )}
      <p className="muted">{t('executors.drain.howItWorks')}</p>
    </div>
  );
}
