/**
 * The console's one modal dialog, for confirmations and small forms (copy, delete, import,
 * rollback, drain with its preview, reset password, revoke): labelled by its title,
 * described by `description` when given, focus moved in on open (the first field, else the first
 * button — or `initialFocus`) and back to where it was on close, Tab kept inside, Escape and the
 * backdrop close it unless `busy`. A plain element with `role="dialog"` rather than
 * `<dialog>.showModal()`, so it behaves the same in every browser and in the test DOM.
 */
import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';
import { useI18n } from '../i18n/I18nProvider';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** The buttons at the bottom. */
  actions: ReactNode;
  /** While true, Escape, the backdrop and × do not close it (a request is in flight). */
  busy?: boolean;
  /** `wide` for tables and side-by-side content (the drain preview, diffs, documents). */
  size?: 'normal' | 'wide';
  /** `alertdialog` for a destructive confirmation. */
  role?: 'dialog' | 'alertdialog';
}

export function Dialog({ title, onClose, children, actions, busy = false, size = 'normal', role = 'dialog' }: DialogProps) {
  const { t } = useI18n();
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const busyRef = useRef(busy);
  busyRef.current = busy;

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const box = ref.current;
    const first =
      box?.querySelector<HTMLElement>('[data-autofocus]') ??
      box?.querySelector<HTMLElement>('.dialog-body input:not([disabled]), .dialog-body textarea:not([disabled]), .dialog-body select:not([disabled])') ??
      box?.querySelector<HTMLElement>('.dialog-actions button:not([disabled])');
    (first ?? box)?.focus();
    return () => {
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      if (!busyRef.current) closeRef.current();
      return;
    }
    if (event.key !== 'Tab' || !ref.current) return;
    const items = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    if (items.length === 0) return;
    const first = items[0]!;
    const last = items.at(-1)!;
    if (event.shiftKey && (document.activeElement === first || document.activeElement === ref.current)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };

  return (
    <div
      className="dialog-backdrop"
      onMouseDown={(event) => {
        if (event.target === event.currentTarget && !busyRef.current) closeRef.current();
      }}
    >
      <div
        ref={ref}
        className={`dialog dialog-${size}`}
        role={role}
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-body`}
        aria-busy={busy || undefined}
        tabIndex={-1}
        onKeyDown={onKeyDown}
      >
        <div className="dialog-head">
          <h2 id={`${id}-title`}>{title}</h2>
          <button type="button" className="link dialog-close" aria-label={t('dialog.close')} onClick={onClose} disabled={busy}>
            ×
          </button>
        </div>
        <div className="dialog-body" id={`${id}-body`}>
          {children}
        </div>
        <div className="dialog-actions">{actions}</div>
      </div>
    </div>
  );
}
