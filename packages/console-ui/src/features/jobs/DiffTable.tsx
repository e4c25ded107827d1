/**
 * Field-by-field changes of a job config, as the API answers them (`{field, before, after}`: a
 * history diff, an import's update, a conflict): one row per field, the two values side by side.
 */
import { useI18n } from '../../i18n/I18nProvider';
import './jobs.css';

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** A config value as text: strings as they are, the rest as compact JSON; absent is `undefined` (pure). */
export function formatValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** A config value in a diff cell: `(not set)`, `(empty)`, or the value as code. */
export function ConfigValue({ value }: { value: unknown }) {
  const { t } = useI18n();
  const text = formatValue(value);
  if (text === undefined) return <span className="muted">{t('jobs.diff.absent')}</span>;
  if (text === '') return <span className="muted">{t('jobs.diff.empty')}</span>;
  return <code className="diff-value">{text}</code>;
}

export function DiffTable({ changes, beforeLabel, afterLabel, caption }: { changes: readonly FieldChange[]; beforeLabel: string; afterLabel: string; caption: string }) {
  const { t } = useI18n();
  return (
    <table className="data diff-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{t('jobs.diff.field')}</th>
          <th scope="col">{beforeLabel}</th>
          <th scope="col">{afterLabel}</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.field}>
            <th scope="row">
              <code>{change.field}</code>
            </th>
            <td className="diff-before">
              <ConfigValue value={change.before} />
            </td>
            <td className="diff-after">
              <ConfigValue value={change.after} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
