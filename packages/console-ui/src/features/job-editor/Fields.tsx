/**
 * The editor's controls: one labelled control per JobConfig field with its help and the issues
 * core's checker (or the server) names for it, and the item-parameters table. Every control is a
 * native one (keyboard and screen readers as the browser gives them); help and issues are tied to
 * it with `aria-describedby`, and a field with an issue is `aria-invalid`.
 */
import { useMemo } from 'react';
import type { ApiIssue } from '../../api/client';
import { useI18n } from '../../i18n/I18nProvider';
import { FIELDS, issueDetail, itemOfIssue, itemRow, type BooleanPath, type FieldPath, type ItemParameterRow, type JobForm, type TextPath } from './form';

/** The rules with a label of their own (any other shows by its name). */
const KNOWN_RULES = [
  'required', 'type', 'pattern', 'format', 'minimum', 'maximum', 'min-length', 'max-length', 'max-items', 'unique-items', 'one-of', 'unknown-field',
  'cron', 'time-zone', 'item-range', 'self-reference', 'local-mode', 'url', 'not-allowed', 'unknown-job', 'cycle', 'max-size', 'already-exists',
] as const;
type KnownRule = (typeof KNOWN_RULES)[number];

/** The message key of each select's options (a type error when the catalogue misses one). */
type SelectSpec = Extract<(typeof FIELDS)[number], { kind: 'select' }>;
type OptionKey = { [S in SelectSpec as S['path']]: `jobEditor.option.${S['path']}.${S['options'][number]}` }[SelectSpec['path']];

/** The id of a field's control (the error summary focuses it). */
export const controlId = (formId: string, path: string) => `${formId}-${path.replace(/\./g, '-')}`;

/** An issue's sentence: its rule's label, then the checker's own words. */
export function useIssueText(): (issue: ApiIssue) => string {
  const { t } = useI18n();
  return (issue) => {
    const rule = (KNOWN_RULES as readonly string[]).includes(issue.rule) ? t(`jobEditor.rule.${issue.rule as KnownRule}`) : issue.rule;
    return t('jobEditor.issue', { rule, detail: issueDetail(issue) });
  };
}

export function IssueList({ id, issues }: { id: string; issues: readonly ApiIssue[] }) {
  const text = useIssueText();
  if (issues.length === 0) return null;
  return (
    <div id={id} className="field-issues">
      {issues.map((issue, i) => (
        <small key={`${issue.field}:${issue.rule}:${i}`} className="field-error">
          {text(issue)}
        </small>
      ))}
    </div>
  );
}

/** A field's label (pure lookup, type-checked against the catalogue). */
export function useFieldLabel(): (path: FieldPath) => string {
  const { t } = useI18n();
  return (path) => t(`jobEditor.field.${path}`);
}

interface FieldProps {
  formId: string;
  path: FieldPath;
  form: JobForm;
  issues: readonly ApiIssue[];
  onText: (path: TextPath, value: string) => void;
  onFlag: (path: BooleanPath, value: boolean) => void;
  onBlur: (path: FieldPath) => void;
  readOnly?: boolean;
  /** Help that replaces the field's own (the name in edit mode). */
  help?: string;
  /** Suggestions for a text field (time zones). */
  suggestions?: readonly string[];
}

export function Field({ formId, path, form, issues, onText, onFlag, onBlur, readOnly = false, help, suggestions }: FieldProps) {
  const { t } = useI18n();
  const spec = FIELDS.find((f) => f.path === path)!;
  const id = controlId(formId, path);
  const helpId = `${id}-help`;
  const issuesId = `${id}-issues`;
  const describedBy = issues.length > 0 ? `${helpId} ${issuesId}` : helpId;
  const invalid = issues.length > 0 || undefined;
  const helpText = help ?? t(`jobEditor.help.${path}`);
  const label = t(`jobEditor.field.${path}`);

  if (spec.kind === 'checkbox') {
    const flag = path as BooleanPath;
    return (
      <div className="field field-check">
        <label htmlFor={id} className="check">
          <input id={id} type="checkbox" checked={form.flags[flag]} onChange={(e) => onFlag(flag, e.target.checked)} onBlur={() => onBlur(path)} aria-describedby={describedBy} aria-invalid={invalid} />
          {label}
        </label>
        <small id={helpId} className="help">
          {helpText}
        </small>
        <IssueList id={issuesId} issues={issues} />
      </div>
    );
  }

  const textPath = path as TextPath;
  const value = form.text[textPath];
  const common = {
    id,
    value,
    onBlur: () => onBlur(path),
    'aria-describedby': describedBy,
    'aria-invalid': invalid,
    readOnly,
  };
  let control;
  if (spec.kind === 'select') {
    control = (
      <select {...common} onChange={(e) => onText(textPath, e.target.value)} disabled={readOnly}>
        {(spec.options ?? []).map((option) => (
          <option key={option} value={option}>
            {t(`jobEditor.option.${path}.${option}` as OptionKey)}
          </option>
        ))}
      </select>
    );
  } else if (spec.kind === 'textarea' || spec.kind === 'code' || spec.kind === 'list') {
    control = (
      <textarea
        {...common}
        rows={spec.kind === 'code' ? 4 : 3}
        className={spec.kind === 'textarea' ? undefined : 'mono'}
        spellCheck={spec.kind === 'textarea'}
        onChange={(e) => onText(textPath, e.target.value)}
      />
    );
  } else {
    control = (
      <input
        {...common}
        type="text"
        inputMode={spec.kind === 'number' ? 'numeric' : undefined}
        className={spec.kind === 'number' ? 'num-input' : path === 'cron' || path === 'name' || path === 'handler' ? 'mono' : undefined}
        spellCheck={false}
        autoComplete="off"
        list={suggestions ? `${id}-suggestions` : undefined}
        onChange={(e) => onText(textPath, e.target.value)}
      />
    );
  }
  return (
    <div className={`field field-${spec.kind}`}>
      <label htmlFor={id}>{label}</label>
      {control}
      {suggestions && (
        <datalist id={`${id}-suggestions`}>
          {suggestions.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      )}
      <small id={helpId} className="help">
        {helpText}
      </small>
      <IssueList id={issuesId} issues={issues} />
    </div>
  );
}

/** The most rows "a row for every shard" adds (more shards: add the rows that need a parameter). */
export const FILL_MAX_ROWS = 100;

/** Shard item parameters: a row per item (item number, parameter), each row's issues under it. */
export function ItemParametersField({
  formId,
  form,
  issues,
  onChange,
}: {
  formId: string;
  form: JobForm;
  issues: readonly ApiIssue[];
  onChange: (rows: ItemParameterRow[]) => void;
}) {
  const { t } = useI18n();
  const id = controlId(formId, 'shardingItemParameters');
  const rows = form.itemParameters;
  const count = Number(form.text.shardingTotalCount);
  const byItem = useMemo(() => {
    const map = new Map<string, ApiIssue[]>();
    for (const issue of issues) {
      const item = itemOfIssue(issue);
      if (item !== undefined) map.set(item, [...(map.get(item) ?? []), issue]);
    }
    return map;
  }, [issues]);
  const general = issues.filter((i) => itemOfIssue(i) === undefined);
  const seen = new Map<string, number>();
  for (const row of rows) seen.set(row.item.trim(), (seen.get(row.item.trim()) ?? 0) + 1);
  const duplicates = [...seen].filter(([item, n]) => item !== '' && n > 1).map(([item]) => item);
  const update = (key: number, change: Partial<ItemParameterRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const nextItem = () => {
    const used = new Set(rows.map((r) => r.item.trim()));
    let n = 0;
    while (used.has(String(n))) n += 1;
    return String(n);
  };
  const canFill = Number.isInteger(count) && count >= 1 && count <= FILL_MAX_ROWS && rows.length < count;
  const fill = () => {
    const used = new Set(rows.map((r) => r.item.trim()));
    const added = Array.from({ length: count }, (_, i) => String(i)).filter((i) => !used.has(i)).map((i) => itemRow(i, ''));
    onChange([...rows, ...added].sort((a, b) => Number(a.item) - Number(b.item)));
  };
  return (
    <fieldset className="field field-items" id={id} aria-describedby={`${id}-help`} tabIndex={-1}>
      <legend>{t('jobEditor.field.shardingItemParameters')}</legend>
      <small id={`${id}-help`} className="help">
        {t('jobEditor.help.shardingItemParameters')}
      </small>
      {rows.length === 0 ? (
        <p className="muted">{t('jobEditor.items.none')}</p>
      ) : (
        <table className="items-table">
          <thead>
            <tr>
              <th scope="col">{t('jobEditor.items.item')}</th>
              <th scope="col">{t('jobEditor.items.value')}</th>
              <th scope="col">
                <span className="visually-hidden">{t('jobEditor.items.remove')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => {
              const rowIssues = byItem.get(row.item.trim()) ?? [];
              const issuesId = `${id}-${row.key}-issues`;
              return (
                <tr key={row.key}>
                  <td>
                    <input
                      className="num-input"
                      inputMode="numeric"
                      value={row.item}
                      aria-label={t('jobEditor.items.itemLabel', { row: index + 1 })}
                      aria-invalid={rowIssues.length > 0 || undefined}
                      aria-describedby={rowIssues.length > 0 ? issuesId : undefined}
                      onChange={(e) => update(row.key, { item: e.target.value })}
                    />
                  </td>
                  <td>
                    <input value={row.value} aria-label={t('jobEditor.items.valueLabel', { row: index + 1 })} onChange={(e) => update(row.key, { value: e.target.value })} />
                    <IssueList id={issuesId} issues={rowIssues} />
                  </td>
                  <td>
                    <button type="button" className="link" aria-label={t('jobEditor.items.removeLabel', { row: index + 1 })} onClick={() => onChange(rows.filter((r) => r.key !== row.key))}>
                      {t('jobEditor.items.remove')}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {duplicates.map((item) => (
        <small key={item} className="field-warning">
          {t('jobEditor.items.duplicate', { item })}
        </small>
      ))}
      <IssueList id={`${id}-issues`} issues={general} />
      <div className="items-actions">
        <button type="button" onClick={() => onChange([...rows, itemRow(nextItem(), '')])}>
          {t('jobEditor.items.add')}
        </button>
        {canFill && (
          <button type="button" onClick={fill}>
            {t('jobEditor.items.fill')}
          </button>
        )}
      </div>
    </fieldset>
  );
}
