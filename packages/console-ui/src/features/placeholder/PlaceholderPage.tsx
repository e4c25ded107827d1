/** A page not built yet: says so in the user's language and points at the API docs (never blank). */
import type { MessageKey } from '../../i18n';
import { useI18n } from '../../i18n/I18nProvider';

export function PlaceholderPage({ title }: { title: MessageKey }) {
  const { t } = useI18n();
  return (
    <section aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">{t(title)}</h1>
      <div className="state state-empty">
        <p>
          <strong>{t('placeholder.title', { page: t(title) })}</strong>
        </p>
        <p>{t('placeholder.body')}</p>
        <a href="/docs">{t('placeholder.apiDocs')}</a>
      </div>
    </section>
  );
}
