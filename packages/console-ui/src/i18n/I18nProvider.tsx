/** The language as React context: `useI18n()` gives `t`, the locale, and `setLocale` (remembered). */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { LOCALE_STORAGE_KEY, initialLocale, translate, type Locale, type MessageKey, type MessageParams } from './index';
import { createTimeFormatter } from './time';

/** What {@link useI18n} gives. */
export interface I18n {
  locale: Locale;
  /** A message in the current language. */
  t: (key: MessageKey, params?: MessageParams) => string;
  /** Switches the language and remembers it (localStorage). */
  setLocale: (locale: Locale) => void;
  /**
   * Formats an instant (epoch ms) in the browser's zone, or in `timeZone`: 24-hour, the year only
   * when it is not this year ("Nov 23, 21:33:15"; see time.ts).
   */
  formatTime: (epochMs: number, timeZone?: string) => string;
}

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
    const format = createTimeFormatter(locale);
    return {
      locale,
      setLocale,
      t: (key, params) => translate(locale, key, params),
      formatTime: (epochMs, timeZone) => format(epochMs, timeZone),
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
