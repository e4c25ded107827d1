/** The language as React context: `useI18n()` gives `t`, the locale, and `setLocale` (remembered). */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { LOCALE_STORAGE_KEY, initialLocale, translate, type Locale, type MessageKey, type MessageParams } from './index';

/** What {@link useI18n} gives. */
export interface I18n {
  locale: Locale;
  /** A message in the current language. */
  t: (key: MessageKey, params?: MessageParams) => string;
  /** Switches the language and remembers it (localStorage). */
  setLocale: (locale: Locale) => void;
  /** Formats an instant (epoch ms) in the browser's zone, or in `timeZone`. */
  formatTime: (epochMs: number, timeZone?: string) => string;
}

/** How instants are shown (dateStyle cannot be combined with timeZoneName). */
const DATE_TIME: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };

const I18nContext = createContext<I18n | undefined>(undefined);

function browserStorage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

/** Provides the language; `locale` fixes it (tests), else the saved choice or the browser's. */
export function I18nProvider({ children, locale: fixed }: { children: ReactNode; locale?: Locale }) {
  const [locale, setLocaleState] = useState<Locale>(() => fixed ?? initialLocale(browserStorage(), globalThis.navigator?.languages ?? []));
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  const setLocale = useCallback((next: Locale) => {
    setLocaleState(next);
    try {
      browserStorage()?.setItem(LOCALE_STORAGE_KEY, next);
    } catch {
      // Not remembered when storage is refused; the switch still applies to this page.
    }
  }, []);
  const value = useMemo<I18n>(() => {
    const formats = new Map<string, Intl.DateTimeFormat>();
    return {
      locale,
      setLocale,
      t: (key, params) => translate(locale, key, params),
      formatTime: (epochMs, timeZone) => {
        const cacheKey = timeZone ?? '';
        let format = formats.get(cacheKey);
        if (!format) {
          format = new Intl.DateTimeFormat(locale, { ...DATE_TIME, ...(timeZone ? { timeZone, timeZoneName: 'short' } : {}) });
          formats.set(cacheKey, format);
        }
        return format.format(epochMs);
      },
    };
  }, [locale, setLocale]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

/** The current language (inside {@link I18nProvider}). */
export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
