/**
 * A save refused as stale (409 `conflict`: someone wrote the job since the version the edit started
 * from). Shows the two versions side by side — the fields where the user's edit and the current
 * config differ, each marked with who changed it since the edit began, and both configs in full —
 * and offers the two ways on: reload theirs, or reapply the edit on their version.
 */
import { diffJobConfig, jsonEqual, type JobConfig } from '@orrery/core/schemas';
import { useId } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { ConfigValue } from '../jobs/DiffTable';

/** The current job as the 409's details carry it. */
export interface CurrentJob {
  version: number;
  config: JobConfig | null;
  problem?: string;
}

export interface ConflictPanelProps {
  /** The user's edit, normalised by the checker. */
  mine: JobConfig;
  /** The config the edit started from (null: it was broken), and its version. */
  base: JobConfig | null;
  baseVersion: number;
  current: CurrentJob;
  busy: boolean;
  reloading: boolean;
  onReload: () => void;
  onReapply: () => void;
}

export function ConflictPanel({ mine, base, baseVersion, current, busy, reloading, onReload, onReapply }: ConflictPanelProps) {
  const { t } = useI18n();
  const id = useId();
  const theirs = current.config;
  const changes = theirs ? diffJobConfig(theirs, mine) : [];
  const changedSinceBase = (config: JobConfig, field: keyof JobConfig) => base !== null && !jsonEqual(base[field], config[field]);
  return (
    <section className="conflict" role="alert" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t('jobEditor.conflict.title')}</h2>
      <p>{t('jobEditor.conflict.intro', { version: current.version, base: baseVersion })}</p>
      {theirs === null ? (
        <p className="field-error">{t('jobEditor.conflict.broken', { problem: current.problem ?? '' })}</p>
      ) : changes.length === 0 ? (
        <p>{t('jobEditor.conflict.same')}</p>
      ) : (
        <table className="data conflict-table">
          <caption className="visually-hidden">{t('jobEditor.conflict.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('jobEditor.conflict.field')}</th>
              <th scope="col">{t('jobEditor.conflict.yours')}</th>
              <th scope="col">{t('jobEditor.conflict.theirs', { version: current.version })}</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((change) => (
              <tr key={change.field}>
                <th scope="row">
                  <code>{change.field}</code>
                </th>
                <td>
                  <ConfigValue value={change.after} />
                  {changedSinceBase(mine, change.field) && (
                    <>
                      {' '}
                      <Badge tone="info">{t('jobEditor.conflict.changedByYou')}</Badge>
                    </>
                  )}
                </td>
                <td>
                  <ConfigValue value={change.before} />
                  {changedSinceBase(theirs, change.field) && (
                    <>
                      {' '}
                      <Badge tone="warn">{t('jobEditor.conflict.changedByThem')}</Badge>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details className="conflict-full">
        <summary>{t('jobEditor.conflict.full')}</summary>
        <div className="side-by-side">
          <figure>
            <figcaption>{t('jobEditor.conflict.yours')}</figcaption>
            <pre>{JSON.stringify(mine, null, 2)}</pre>
          </figure>
          <figure>
            <figcaption>{t('jobEditor.conflict.theirs', { version: current.version })}</figcaption>
            <pre>{theirs ? JSON.stringify(theirs, null, 2) : current.problem}</pre>
          </figure>
        </div>
      </details>
      <div className="conflict-actions">
        <button type="button" onClick={onReload} disabled={busy}>
          {reloading ? t('jobEditor.conflict.reloading') : t('jobEditor.conflict.reload')}
        </button>
        <button type="button" className="primary" onClick={onReapply} disabled={busy}>
          {t('jobEditor.conflict.reapply', { version: current.version })}
        </button>
      </div>
    </section>
  );
}
