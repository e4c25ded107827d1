/** The language switch (remembered in localStorage). */
import { useId } from 'react';
import { LOCALES, isLocale } from '../i18n';
import { useI18n } from '../i18n/I18nProvider';

export function LanguageSelect() {
  const { t, locale, setLocale } = useI18n();
  const id = useId();
  return (
    <span className="language">
      <label htmlFor={id}>{t('menu.language')}</label>
      <select id={id} value={locale} onChange={(e) => isLocale(e.target.value) && setLocale(e.target.value)}>
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {t(`lang.${l}`)}
          </option>
        ))}
      </select>
    </span>
  );
}
