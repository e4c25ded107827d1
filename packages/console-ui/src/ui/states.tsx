/** The states every page shows: loading, empty, error (with a retry), and a status message. */
import type { ReactNode } from 'react';
import { isApiError } from '../api/client';
import { useI18n } from '../i18n/I18nProvider';

export function Loading({ label }: { label?: string }) {
  const { t } = useI18n();
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label ?? t('state.loading')}
    </div>
  );
}

export function Empty({ children, action }: { children: ReactNode; action?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p>{children}</p>
      {action}
    </div>
  );
}

/** The message to show for an error (the server's own message for a validation or conflict). */
export function useErrorMessage(): (error: unknown) => string {
  const { t } = useI18n();
  return (error) => {
    if (!isApiError(error)) return error instanceof Error ? error.message : String(error);
    switch (error.code) {
      case 'network':
        return t('state.network');
      case 'forbidden':
        return t('state.forbidden');
      case 'not-found':
        return t('state.notFound');
      case 'unavailable':
        return `${t('state.unavailable')} (${error.message})`;
      default:
        return error.message;
    }
  };
}

export function ErrorState({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  return (
    <div className="state state-error" role="alert">
      <strong>{t('state.error')}</strong>
      <p>{message(error)}</p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {t('state.retry')}
        </button>
      )}
    </div>
  );
}

/** A polite status line (results of actions). */
export function Notice({ tone = 'info', children }: { tone?: 'info' | 'error'; children: ReactNode }) {
  return (
    <div className={`notice notice-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
