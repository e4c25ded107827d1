/** The config tab: the job's current config, read only — a key/value list, or the whole as JSON. */
import type { JobDetailAnswer } from '@orrery/console/api-types';
import { useState } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { Notice } from '../../ui/states';

/** A config value as shown in the list: text, or JSON for objects (pure). */
export function configValue(value: unknown): { kind: 'empty' } | { kind: 'text'; text: string } | { kind: 'block'; text: string } {
  if (value === undefined || value === null || value === '') return { kind: 'empty' };
  if (typeof value === 'string') return value.includes('\n') ? { kind: 'block', text: value } : { kind: 'text', text: value };
  if (typeof value === 'number' || typeof value === 'boolean') return { kind: 'text', text: String(value) };
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'empty' };
    if (value.every((v) => typeof v === 'string' || typeof v === 'number')) return { kind: 'text', text: value.join(', ') };
  }
  if (typeof value === 'object' && Object.keys(value).length === 0) return { kind: 'empty' };
  return { kind: 'block', text: JSON.stringify(value, null, 2) };
}

/** Fields shown in a monospace font (commands and expressions). */
const CODE_FIELDS = new Set(['command', 'cron', 'handler', 'jobParameter', 'pausePeriodDate', 'pausePeriodTime']);

export function ConfigPanel({ detail }: { detail: JobDetailAnswer }) {
  const { t } = useI18n();
  const [asJson, setAsJson] = useState(false);
  if (!detail.config) return <Notice tone="error">{t('jobDetail.config.broken', { problem: detail.problem ?? '' })}</Notice>;
  const config = detail.config;
  return (
    <div className="config-panel">
      <div className="config-tools">
        <span className="muted">{t('jobDetail.config.version', { version: detail.version })}</span>
        <button type="button" aria-pressed={asJson} onClick={() => setAsJson((v) => !v)}>
          {t('jobDetail.config.asJson')}
        </button>
      </div>
      {asJson ? (
        <pre className="config-json" tabIndex={0} aria-label={t('jobDetail.config.json')}>
          {JSON.stringify(config, null, 2)}
        </pre>
      ) : (
        <dl className="config-list">
          {Object.entries(config).map(([key, value]) => {
            const shown = configValue(value);
            return (
              <div key={key} className="config-row">
                <dt>
                  <code>{key}</code>
                </dt>
                <dd>
                  {shown.kind === 'empty' ? (
                    <span className="muted">{t('jobDetail.config.empty')}</span>
                  ) : shown.kind === 'text' ? (
                    CODE_FIELDS.has(key) ? <code className="config-text">{shown.text}</code> : <span className="config-text">{shown.text}</span>
                  ) : (
                    <pre className="config-block">{shown.text}</pre>
                  )}
                </dd>
              </div>
            );
          })}
        </dl>
      )}
    </div>
  );
}
