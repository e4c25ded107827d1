/**
 * A button that opens a small menu (a row's "More" actions, the export formats). The menu is
 * placed `fixed` under the button, so a table cell that clips its content does not clip it; it
 * closes on Escape (focus back on the button), on a click outside, on scrolling and after a choice.
 * Keyboard: Enter/Space/ArrowDown open it on the first item; ArrowUp/ArrowDown/Home/End move.
 */
import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import './jobs.css';

export interface MenuItem {
  label: string;
  onSelect: () => void;
  disabled?: boolean;
  danger?: boolean;
}

export function MenuButton({ label, accessibleName, items, className }: { label: string; accessibleName?: string; items: readonly MenuItem[]; className?: string }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [place, setPlace] = useState<{ top: number; left: number }>();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);

  useLayoutEffect(() => {
    if (!open || !button.current) return;
    const rect = button.current.getBoundingClientRect();
    // Right-aligned under the button, kept inside the window.
    const width = menu.current?.offsetWidth ?? 160;
    setPlace({ top: rect.bottom + 4, left: Math.max(8, Math.min(rect.right - width, window.innerWidth - width - 8)) });
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]:not([disabled])')?.focus();
  }, [open]);

  useEffect(() => {
    if (!open) return undefined;
    const close = (event: Event) => {
      if (event.type === 'scroll' || !(event.target instanceof Node) || (!menu.current?.contains(event.target) && !button.current?.contains(event.target))) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    window.addEventListener('scroll', close, true);
    window.addEventListener('resize', close);
    return () => {
      document.removeEventListener('mousedown', close);
      window.removeEventListener('scroll', close, true);
      window.removeEventListener('resize', close);
    };
  }, [open]);

  const move = (event: KeyboardEvent) => {
    const entries = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not([disabled])') ?? [])];
    const at = entries.indexOf(document.activeElement as HTMLElement);
    let next: number | undefined;
    if (event.key === 'ArrowDown') next = (at + 1) % entries.length;
    else if (event.key === 'ArrowUp') next = (at - 1 + entries.length) % entries.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = entries.length - 1;
    else if (event.key === 'Escape' || event.key === 'Tab') {
      if (event.key === 'Escape') {
        event.preventDefault();
        button.current?.focus();
      }
      setOpen(false);
      return;
    }
    const target = next === undefined ? undefined : entries[next];
    if (target) {
      event.preventDefault();
      target.focus();
    }
  };

  return (
    <>
      <button
        ref={button}
        type="button"
        className={className}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        aria-label={accessibleName}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(event) => {
          if (event.key === 'ArrowDown') {
            event.preventDefault();
            setOpen(true);
          }
        }}
      >
        {label} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <ul ref={menu} id={id} role="menu" aria-label={accessibleName ?? label} className="menu-popover" style={place ? { top: place.top, left: place.left } : { visibility: 'hidden' }} onKeyDown={move}>
          {items.map((item) => (
            <li key={item.label} role="none">
              <button
                type="button"
                role="menuitem"
                tabIndex={-1}
                disabled={item.disabled}
                className={item.danger ? 'danger' : undefined}
                onClick={() => {
                  setOpen(false);
                  // Focus back on the button first: a dialog the choice opens returns focus there.
                  button.current?.focus();
                  item.onSelect();
                }}
              >
                {item.label}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
