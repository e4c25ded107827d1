/**
 * The jobs page's owner tools, each a dialog: copy jobs under new names, delete jobs (with the
 * server's rule said up front: enabled jobs are refused unless forced), and import an `orrery apply`
 * document — dry run first, the plan shown job by job, then apply. And the export menu (any reader).
 */
import { useMutation } from '@tanstack/react-query';
import type { ImportAnswerBody } from '@orrery/console/api-types';
import { useId, useState, type ChangeEvent } from 'react';
import { isApiError, type ApiIssue } from '../../api/client';
import type { JobListItem } from '../../api/types';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge, type Tone } from '../../ui/Badge';
import { useErrorMessage } from '../../ui/states';
import { Dialog } from '../../ui/Dialog';
import { DiffTable } from './DiffTable';
import { MenuButton } from './MenuButton';
import { BATCH_CHUNK, batchJobs, copyJob, deleteJob } from './queries';
import { exportJobs, importJobs, saveAsFile, type ExportFormat, type ImportSource } from './transfer';

/** What a tool reports to the page when it is done (shown as the page's notice). */
export type ToolNotice = { tone: 'info' | 'error'; text: string };

/** The most jobs one copy dialog copies (each needs a name of its own). */
export const COPY_MAX_JOBS = 100;
/** The names a delete confirmation lists before "and N more". */
export const DELETE_NAMES_SHOWN = 20;
/** The suffix a copy's suggested name gets. */
export const COPY_SUFFIX = '-copy';

/* ------------------------------------------------------------------ copy */

interface CopyRow {
  from: string;
  to: string;
  state: 'todo' | 'done' | 'failed';
  error?: string;
}

export function CopyJobsDialog({ namespace, names, onClose, onDone }: { namespace: string; names: readonly string[]; onClose: () => void; onDone: (notice: ToolNotice) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const [rows, setRows] = useState<CopyRow[]>(() => names.slice(0, COPY_MAX_JOBS).map((from) => ({ from, to: `${from}${COPY_SUFFIX}`, state: 'todo' })));
  const copy = useMutation({
    mutationFn: async () => {
      const next = [...rows];
      for (let i = 0; i < next.length; i += 1) {
        const row = next[i]!;
        if (row.state === 'done') continue;
        try {
          await copyJob(namespace, row.from, row.to.trim());
          next[i] = { ...row, state: 'done' };
        } catch (error) {
          const issues = isApiError(error) ? error.issuesFor('name') : [];
          const text = issues.length > 0 ? issues.map((issue) => issue.message).join(' ') : isApiError(error, 'already-exists') ? t('jobs.copy.exists', { name: row.to.trim() }) : message(error);
          next[i] = { ...row, state: 'failed', error: text };
        }
        setRows([...next]);
      }
      return next;
    },
    onSuccess: (done) => {
      const failed = done.filter((r) => r.state === 'failed').length;
      if (failed === 0) {
        onDone({ tone: 'info', text: t('jobs.copy.done', { count: done.length }) });
        onClose();
      }
    },
  });
  const setName = (index: number, to: string) => setRows((all) => all.map((row, i) => (i === index ? { ...row, to, state: row.state === 'done' ? 'done' : 'todo', error: undefined } : row)));
  return (
    <Dialog
      title={t('jobs.copy.title', { count: rows.length })}
      onClose={onClose}
      busy={copy.isPending}
      actions={
        <>
          <button type="button" className="primary" disabled={copy.isPending || rows.every((r) => r.state === 'done')} onClick={() => copy.mutate()}>
            {copy.isPending ? t('jobs.copy.copying') : t('jobs.copy.submit')}
          </button>
          <button type="button" onClick={onClose} disabled={copy.isPending}>
            {t('jobs.cancel')}
          </button>
        </>
      }
    >
      <p>{t('jobs.copy.intro')}</p>
      {names.length > COPY_MAX_JOBS && <p className="field-error">{t('jobs.copy.tooMany', { max: COPY_MAX_JOBS, count: names.length })}</p>}
      <ul className="copy-rows">
        {rows.map((row, i) => (
          <li key={row.from}>
            <label htmlFor={`${id}-${i}`}>{t('jobs.copy.newName', { name: row.from })}</label>
            <input
              id={`${id}-${i}`}
              value={row.to}
              onChange={(e) => setName(i, e.target.value)}
              disabled={row.state === 'done' || copy.isPending}
              aria-invalid={row.state === 'failed' || undefined}
              aria-describedby={row.error ? `${id}-${i}-error` : undefined}
              spellCheck={false}
            />
            {row.state === 'done' && <Badge tone="ok">{t('jobs.copy.copied')}</Badge>}
            {row.error && (
              <small id={`${id}-${i}-error`} className="field-error">
                {row.error}
              </small>
            )}
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

/* ---------------------------------------------------------------- delete */

/** Why one job was not deleted: the server's refusal (`rule` of its check) or a failed write. */
interface Refusal {
  name: string;
  rule: string;
  message: string;
}

/** The refusal of one job of a batch, from the server's `names[i]` issue (pure). */
export function refusalFor(issue: ApiIssue, names: readonly string[]): Refusal {
  const index = /^names\[(\d+)\]$/.exec(issue.field)?.[1];
  return { name: index === undefined ? issue.field : (names[Number(index)] ?? issue.field), rule: issue.rule, message: issue.message };
}

/** What a delete did: how many were deleted, which were refused (nothing done for their chunk) or failed. */
interface DeleteOutcome {
  done: number;
  refused: Refusal[];
}

export function DeleteJobsDialog({ namespace, jobs, onClose, onDone }: { namespace: string; jobs: readonly JobListItem[]; onClose: () => void; onDone: (notice: ToolNotice) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const [force, setForce] = useState(false);
  const names = jobs.map((j) => j.name);
  const enabled = jobs.filter((j) => !j.broken && j.enabled).map((j) => j.name);
  const remove = useMutation({
    mutationFn: async (): Promise<DeleteOutcome> => {
      if (names.length === 1) {
        await deleteJob(namespace, names[0]!, force);
        return { done: 1, refused: [] };
      }
      const outcome: DeleteOutcome = { done: 0, refused: [] };
      for (let i = 0; i < names.length; i += BATCH_CHUNK) {
        const chunk = names.slice(i, i + BATCH_CHUNK);
        try {
          const answer = await batchJobs(namespace, 'delete', chunk, force);
          for (const r of answer.results) {
            if (r.outcome === 'failed') outcome.refused.push({ name: r.name, rule: 'failed', message: r.error?.message ?? '' });
            else outcome.done += 1;
          }
        } catch (error) {
          // All or nothing per batch: the server checked every job of the chunk and did nothing.
          if (!isApiError(error, 'validation') || error.issues.length === 0) throw error;
          outcome.refused.push(...error.issues.map((issue) => refusalFor(issue, chunk)));
        }
      }
      return outcome;
    },
    onSuccess: ({ done, refused }) => {
      if (refused.length === 0) {
        onDone({ tone: 'info', text: t('jobs.delete.done', { count: done }) });
        onClose();
      } else if (done > 0) {
        onDone({ tone: 'error', text: t('jobs.delete.partly', { done, failed: refused.length }) });
      }
    },
  });
  const refusals = remove.data?.refused ?? [];
  const shown = names.slice(0, DELETE_NAMES_SHOWN);
  return (
    <Dialog
      title={t('jobs.delete.title', { count: names.length })}
      onClose={onClose}
      busy={remove.isPending}
      actions={
        <>
          <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
            {remove.isPending ? t('jobs.delete.deleting') : t('jobs.delete.submit', { count: names.length })}
          </button>
          <button type="button" onClick={onClose} disabled={remove.isPending}>
            {t('jobs.cancel')}
          </button>
        </>
      }
    >
      <p>{t('jobs.delete.intro', { count: names.length })}</p>
      <ul className="name-list" aria-label={t('jobs.delete.listLabel')}>
        {shown.map((name) => (
          <li key={name}>
            <code>{name}</code>
            {enabled.includes(name) && (
              <>
                {' '}
                <Badge tone="warn">{t('jobState.enabled')}</Badge>
              </>
            )}
          </li>
        ))}
        {names.length > shown.length && <li className="muted">{t('jobs.delete.more', { count: names.length - shown.length })}</li>}
      </ul>
      <p>{t('jobs.delete.rule')}</p>
      {enabled.length > 0 && <p className="field-warning">{t('jobs.delete.enabledCount', { count: enabled.length })}</p>}
      <label className="check" htmlFor={`${id}-force`}>
        <input id={`${id}-force`} type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} disabled={remove.isPending} />
        {t('jobs.delete.force')}
      </label>
      {remove.isPending && force && <p className="muted">{t('jobs.delete.forceWait')}</p>}
      {refusals.length > 0 && (
        <div role="alert" className="field-error">
          <p>{t('jobs.delete.refused', { count: refusals.length })}</p>
          <ul>
            {refusals.map((r) => (
              <li key={`${r.name}:${r.rule}`}>
                <code>{r.name}</code>: {r.rule === 'disabled' ? t('jobs.delete.refusedEnabled') : r.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {remove.isError && refusals.length === 0 && (
        <p role="alert" className="field-error">
          {isApiError(remove.error, 'conflict') && names.length === 1 && enabled.includes(names[0]!) ? t('jobs.delete.refusedEnabled') : message(remove.error)}
        </p>
      )}
    </Dialog>
  );
}

/* ---------------------------------------------------------------- export */

export function ExportMenu({ namespace, onDone }: { namespace: string; onDone: (notice: ToolNotice) => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const run = useMutation({
    mutationFn: (format: ExportFormat) => exportJobs(namespace, format),
    onSuccess: (file) => {
      saveAsFile(file.text, file.fileName, file.format === 'yaml' ? 'application/yaml' : 'application/json');
      onDone({
        tone: file.broken.length > 0 ? 'error' : 'info',
        text: file.broken.length > 0 ? t('jobs.export.doneBroken', { file: file.fileName, names: file.broken.join(', ') }) : t('jobs.export.done', { file: file.fileName }),
      });
    },
    onError: (error) => onDone({ tone: 'error', text: message(error) }),
  });
  return (
    <MenuButton
      label={run.isPending ? t('jobs.export.exporting') : t('jobs.export')}
      items={[
        { label: t('jobs.export.yaml'), onSelect: () => run.mutate('yaml'), disabled: run.isPending },
        { label: t('jobs.export.json'), onSelect: () => run.mutate('json'), disabled: run.isPending },
      ]}
    />
  );
}

/* ---------------------------------------------------------------- import */

/** What an import does to one job (the answer's `action`). */
export const IMPORT_ACTIONS = ['create', 'update', 'replace', 'unchanged'] as const;
export type ImportAction = (typeof IMPORT_ACTIONS)[number];
const ACTION_TONE: Record<ImportAction, Tone> = { create: 'ok', update: 'info', replace: 'warn', unchanged: 'muted' };

/** A planned change's action (the schema types it as a string; an unknown one counts as an update). */
const importAction = (action: string): ImportAction => ((IMPORT_ACTIONS as readonly string[]).includes(action) ? (action as ImportAction) : 'update');

/** The plan's jobs by action (pure). */
export function planCounts(plan: ImportAnswerBody): Record<ImportAction, number> {
  const counts = { create: 0, update: 0, replace: 0, unchanged: 0 };
  for (const change of plan.changes) counts[importAction(change.action)] += 1;
  return counts;
}

/** An example of Saturn's export (field names are Saturn's, in any language). */
const SATURN_PLACEHOLDER = `[
  {
    "jobName": "settle-orders",
    "jobType": "SHELL_JOB",
    "cron": "0 */5 * * * ?",
    "shardingTotalCount": 2,
    "shardingItemParameters": "0=/opt/settle.sh east,1=/opt/settle.sh west"
  }
]`;

export function ImportDialog({ namespace, onClose, onDone }: { namespace: string; onClose: () => void; onDone: (notice: ToolNotice) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const [text, setText] = useState('');
  const [source, setSource] = useState<ImportSource>('orrery');
  const [fileError, setFileError] = useState<string>();
  // The plan, and the text and source it was made from (Apply sends exactly those).
  const [plan, setPlan] = useState<{ text: string; source: ImportSource; answer: ImportAnswerBody }>();
  const preview = useMutation({ mutationFn: ({ document, from }: { document: string; from: ImportSource }) => importJobs(namespace, document, true, from), onSuccess: (answer, { document, from }) => setPlan({ text: document, source: from, answer }) });
  const apply = useMutation({
    mutationFn: ({ document, from }: { document: string; from: ImportSource }) => importJobs(namespace, document, false, from),
    onSuccess: (answer) => {
      const result = answer.result ?? { written: [], unchanged: [], conflicts: [] };
      const text = t('jobs.import.done', { written: result.written.length, unchanged: result.unchanged.length, conflicts: result.conflicts.length });
      onDone({ tone: result.conflicts.length > 0 ? 'error' : 'info', text });
      if (result.conflicts.length === 0) onClose();
    },
  });
  const pending = preview.isPending || apply.isPending;
  const fresh = plan !== undefined && plan.text === text && plan.source === source;
  const counts = plan ? planCounts(plan.answer) : undefined;
  const toWrite = counts ? counts.create + counts.update + counts.replace : 0;
  const error = apply.error ?? preview.error;
  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setFileError(undefined);
    if (!file) return;
    try {
      setText(await file.text());
    } catch (cause) {
      setFileError(cause instanceof Error ? cause.message : String(cause));
    }
  };
  return (
    <Dialog
      title={t('jobs.import.title')}
      size="wide"
      onClose={onClose}
      busy={pending}
      actions={
        <>
          <button type="button" className={fresh ? undefined : 'primary'} disabled={pending || text.trim() === ''} onClick={() => preview.mutate({ document: text, from: source })}>
            {preview.isPending ? t('jobs.import.previewing') : t('jobs.import.preview')}
          </button>
          <button type="button" className={fresh ? 'primary' : undefined} disabled={pending || !fresh || toWrite === 0} onClick={() => plan && apply.mutate({ document: plan.text, from: plan.source })}>
            {apply.isPending ? t('jobs.import.applying') : t('jobs.import.apply', { count: toWrite })}
          </button>
          <button type="button" onClick={onClose} disabled={pending}>
            {t('jobs.cancel')}
          </button>
        </>
      }
    >
      <fieldset className="import-kind" disabled={pending}>
        <legend>{t('jobs.import.source')}</legend>
        <label>
          <input type="radio" name={`${id}-source`} checked={source === 'orrery'} onChange={() => setSource('orrery')} /> {t('jobs.import.source.orrery')}
        </label>
        <label>
          <input type="radio" name={`${id}-source`} checked={source === 'saturn'} onChange={() => setSource('saturn')} /> {t('jobs.import.source.saturn')}
        </label>
      </fieldset>
      <p>{source === 'saturn' ? t('jobs.import.saturnHelp') : t('jobs.import.intro')}</p>
      <div className="import-source">
        <label htmlFor={`${id}-file`}>{t('jobs.import.file')}</label>
        <input id={`${id}-file`} type="file" accept=".yaml,.yml,.json,application/yaml,application/json,text/yaml" onChange={(e) => void onFile(e)} disabled={pending} />
        {fileError && <small className="field-error">{fileError}</small>}
        <label htmlFor={`${id}-text`}>{source === 'saturn' ? t('jobs.import.saturnDocument') : t('jobs.import.document')}</label>
        <textarea id={`${id}-text`} rows={10} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} placeholder={source === 'saturn' ? SATURN_PLACEHOLDER : t('jobs.import.placeholder')} disabled={pending} aria-describedby={`${id}-help`} />
        <small id={`${id}-help`} className="muted">
          {t('jobs.import.help')}
        </small>
      </div>
      {plan && !fresh && <p className="field-warning">{t('jobs.import.stale')}</p>}
      {error && (
        <div role="alert" className="field-error">
          <p>{isApiError(error, 'validation') ? t('jobs.import.invalid') : message(error)}</p>
          {isApiError(error) && error.issues.length > 0 && (
            <ul>
              {error.issues.map((issue, i) => (
                <li key={`${issue.field}:${issue.rule}:${i}`}>{issue.message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      {plan && counts && (
        <section aria-label={t('jobs.import.planLabel')} className="import-plan">
          <h3>{t('jobs.import.plan', counts)}</h3>
          {plan.answer.saturn && (plan.answer.saturn.refused.length > 0 || plan.answer.saturn.notes.length > 0) && (
            <div className="import-saturn">
              {plan.answer.saturn.refused.length > 0 && (
                <>
                  <p className="field-warning">{t('jobs.import.saturnRefused', { count: plan.answer.saturn.refused.length })}</p>
                  <ul>
                    {plan.answer.saturn.refused.map((r) => (
                      <li key={`refused:${r.job}`}>
                        <code>{r.job}</code>: {r.reason}
                      </li>
                    ))}
                  </ul>
                </>
              )}
              {plan.answer.saturn.notes.length > 0 && (
                <details>
                  <summary>{t('jobs.import.saturnNotes', { count: plan.answer.saturn.notes.length })}</summary>
                  <ul>
                    {plan.answer.saturn.notes.map((n, i) => (
                      <li key={`note:${n.job}:${n.field}:${i}`}>
                        <code>
                          {n.job}.{n.field}
                        </code>
                        : {n.note}
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </div>
          )}
          <p className="muted">{t('jobs.import.noDelete')}</p>
          <ul>
            {plan.answer.changes.map((change) => (
              <li key={change.name}>
                <Badge tone={ACTION_TONE[importAction(change.action)]}>{t(`jobs.import.action.${importAction(change.action)}`)}</Badge> <code>{change.name}</code>{' '}
                <span className="muted">{change.enabled ? t('jobs.import.enabledAfter') : t('jobs.import.disabledAfter')}</span>
                {change.problem && <span className="muted"> — {change.problem}</span>}
                {change.changes && change.changes.length > 0 && (
                  <DiffTable changes={change.changes} beforeLabel={t('jobs.import.now')} afterLabel={t('jobs.import.after')} caption={t('jobs.import.changesOf', { name: change.name })} />
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {apply.data?.result && apply.data.result.conflicts.length > 0 && (
        <div role="alert" className="field-error">
          <p>{t('jobs.import.conflicts')}</p>
          <ul>
            {apply.data.result.conflicts.map((c) => (
              <li key={c.name}>
                <code>{c.name}</code>: {c.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </Dialog>
  );
}
