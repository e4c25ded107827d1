/**
 * The console's languages: the catalogues, the one formatter ({@link translate}), and how the
 * language is chosen (the saved choice, else the browser's). No React here: `I18nProvider.tsx`
 * makes it a context; catalogue.test.ts checks the catalogues in plain Node.
 */
import { en, type MessageKey, type Messages } from './en';
import { zhCN } from './zh-CN';

export { en, zhCN, type MessageKey, type Messages };

/** The languages the console speaks, the source first. */
export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];

/** Every catalogue, by locale. */
export const CATALOGUES: Readonly<Record<Locale, Messages>> = { en, 'zh-CN': zhCN };

/** Where the chosen language is remembered (localStorage). */
export const LOCALE_STORAGE_KEY = 'orrery.locale';

/** Values for a message's `{placeholders}`. */
export type MessageParams = Readonly<Record<string, string | number>>;

/** The `{placeholders}` of a message, sorted (pure). */
export function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!))].sort();
}

/** `key`'s message in `locale` with its placeholders filled (an unknown placeholder stays as written). */
export function translate(locale: Locale, key: MessageKey, params?: MessageParams): string {
  const message = CATALOGUES[locale][key] ?? en[key];
  if (!params) return message;
  return message.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** The locale for a list of browser languages (`navigator.languages`): Chinese → zh-CN, else English. */
export function localeFromLanguages(languages: readonly string[]): Locale {
  for (const language of languages) {
    const lower = language.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'en';
}

/** True when `value` names a locale. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The locale to start with: the saved choice, else the browser's languages. */
export function initialLocale(storage: Pick<Storage, 'getItem'> | undefined, languages: readonly string[]): Locale {
  let saved: string | null = null;
  try {
    saved = storage?.getItem(LOCALE_STORAGE_KEY) ?? null;
  } catch {
    // Storage can be disabled (private mode, policies): fall back to the browser's languages.
  }
  return isLocale(saved) ? saved : localeFromLanguages(languages);
}
