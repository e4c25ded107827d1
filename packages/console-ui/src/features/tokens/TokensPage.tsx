/**
 * `/tokens`: the signed-in user's API tokens — name, id, created, expires — create (name, expiry
 * in days; from a session only) and revoke (with a confirmation). A new token's secret is shown
 * once, with a copy button and a warning: it lives in this page's state until dismissed, never in
 * the query cache, and the API cannot show it again.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { TokenAnswer } from '@orrery/console/api-types';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { isApiError } from '../../api/client';
import { useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { Dialog } from '../../ui/Dialog';
import { DEFAULT_DAYS, TOKEN_MAX_DAYS, TOKEN_NAME_MAX, createToken, myTokensQuery, revokeToken, tokensKeys, type CreatedToken } from './queries';
import './tokens.css';

export function TokensPage() {
  const { t, formatTime } = useI18n();
  const { principal } = useSession();
  const tokens = useQuery(myTokensQuery(principal.user));
  const [created, setCreated] = useState<CreatedToken>();
  const [revoking, setRevoking] = useState<TokenAnswer>();
  const [notice, setNotice] = useState<string>();
  // Expiry is judged against the time the list was read (re-read on every refetch).
  const now = tokens.dataUpdatedAt || Date.now();

  return (
    <section aria-labelledby="tokens-title" className="tokens-page">
      <div className="page-header">
        <h1 id="tokens-title">{t('tokens.title')}</h1>
      </div>
      <p className="muted tokens-intro">{t('tokens.intro')}</p>
      {created && <SecretPanel token={created} onDone={() => setCreated(undefined)} />}
      {notice && <Notice>{notice}</Notice>}
      {principal.via === 'token' ? (
        <Notice>{t('tokens.viaToken')}</Notice>
      ) : (
        !created && (
          <CreateTokenForm
            onCreated={(token) => {
              setNotice(undefined);
              setCreated(token);
            }}
          />
        )
      )}
      <h2 id="tokens-list-title">{t('tokens.yours')}</h2>
      {tokens.isPending ? (
        <Loading />
      ) : tokens.isError ? (
        <ErrorState error={tokens.error} onRetry={() => void tokens.refetch()} />
      ) : tokens.data.length === 0 ? (
        <Empty>{t('tokens.empty')}</Empty>
      ) : (
        <div className="table-scroll" role="region" aria-labelledby="tokens-list-title" tabIndex={0}>
          <table className="data tokens-table">
            <thead>
              <tr>
                <th scope="col">{t('tokens.col.name')}</th>
                <th scope="col">{t('tokens.col.id')}</th>
                <th scope="col">{t('tokens.col.created')}</th>
                <th scope="col">{t('tokens.col.expires')}</th>
                <th scope="col">{t('tokens.col.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((token) => {
                const expired = token.expiresAt !== null && token.expiresAt <= now;
                return (
                  <tr key={token.id} className={expired ? 'expired' : undefined}>
                    <th scope="row">{token.name}</th>
                    <td>
                      <code>{token.id}</code>
                    </td>
                    <td className="nowrap">
                      <time dateTime={new Date(token.createdAt).toISOString()} title={String(token.createdAt)}>
                        {formatTime(token.createdAt)}
                      </time>
                    </td>
                    <td className="nowrap">
                      {token.expiresAt === null ? (
                        <span className="muted">{t('tokens.never')}</span>
                      ) : (
                        <>
                          <time dateTime={new Date(token.expiresAt).toISOString()} title={String(token.expiresAt)}>
                            {formatTime(token.expiresAt)}
                          </time>{' '}
                          {expired ? <Badge tone="bad">{t('tokens.expired')}</Badge> : token.expiresAt - now < 7 * 86_400_000 ? <Badge tone="warn">{t('tokens.expiresSoon')}</Badge> : null}
                        </>
                      )}
                    </td>
                    <td>
                      <button type="button" className="danger" aria-label={t('tokens.revokeNamed', { name: token.name, id: token.id })} onClick={() => setRevoking(token)}>
                        {t('tokens.revoke')}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <RevokeModal
          token={revoking}
          onClose={() => setRevoking(undefined)}
          onRevoked={() => {
            setRevoking(undefined);
            setNotice(t('tokens.revoked', { name: revoking.name }));
          }}
        />
      )}
    </section>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (token: CreatedToken) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [days, setDays] = useState(String(DEFAULT_DAYS));
  const create = useMutation({
    mutationFn: createToken,
    // The answer holds the secret: not kept in the mutation cache once the page has it.
    gcTime: 0,
    onSuccess: (token) => {
      // The list is read again (it never holds the secret); the secret goes to the page alone.
      void queryClient.invalidateQueries({ queryKey: tokensKeys.all });
      setName('');
      onCreated(token);
      create.reset();
    },
  });
  const daysNumber = days.trim() === '' ? undefined : Number(days);
  const daysBad = daysNumber !== undefined && !(Number.isInteger(daysNumber) && daysNumber >= 1 && daysNumber <= TOKEN_MAX_DAYS);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === '' || daysBad) return;
    create.mutate(daysNumber === undefined ? { name: name.trim() } : { name: name.trim(), expiresInDays: daysNumber });
  };
  const issues = isApiError(create.error) ? [...create.error.issuesFor('name'), ...create.error.issuesFor('expiresInDays')] : [];
  return (
    <form className="card token-form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t('tokens.createTitle')}</h2>
      <div className="token-fields">
        <div className="field">
          <label htmlFor={`${id}-name`}>{t('tokens.name')}</label>
          <input id={`${id}-name`} required maxLength={TOKEN_NAME_MAX} value={name} onChange={(e) => setName(e.target.value)} placeholder={t('tokens.namePlaceholder')} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor={`${id}-days`}>{t('tokens.days')}</label>
          <input
            id={`${id}-days`}
            type="number"
            inputMode="numeric"
            min={1}
            max={TOKEN_MAX_DAYS}
            step={1}
            value={days}
            onChange={(e) => setDays(e.target.value)}
            aria-invalid={daysBad || undefined}
            aria-describedby={`${id}-days-help`}
          />
          <small id={`${id}-days-help`} className={daysBad ? 'field-error' : 'muted'}>
            {t('tokens.daysHelp', { max: TOKEN_MAX_DAYS })}
          </small>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? t('tokens.creating') : t('tokens.create')}
        </button>
      </div>
      {daysNumber === undefined && <p className="field-warning">{t('tokens.neverWarning')}</p>}
      {issues.map((issue) => (
        <p key={`${issue.field}/${issue.rule}`} className="field-error" role="alert">
          {issue.message}
        </p>
      ))}
      {create.isError && issues.length === 0 && (
        <p className="field-error" role="alert">
          {message(create.error)}
        </p>
      )}
    </form>
  );
}

/** The new token's secret, this once: copy it, then dismiss. */
function SecretPanel({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  const { t, formatTime } = useI18n();
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const [copied, setCopied] = useState<'yes' | 'manual'>();
  useEffect(() => heading.current?.focus(), []);
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(token.token);
      setCopied('yes');
    } catch {
      // No clipboard (an insecure context, a refusal): select it for Ctrl+C / ⌘C.
      field.current?.focus();
      field.current?.select();
      setCopied('manual');
    }
  };
  return (
    <section className="card token-secret" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        {t('tokens.secretTitle', { name: token.name })}
      </h2>
      <p className="secret-warning" role="alert">
        <strong>{t('tokens.secretWarning')}</strong>
      </p>
      <div className="secret-row">
        <label htmlFor={`${id}-secret`} className="visually-hidden">
          {t('tokens.secretLabel')}
        </label>
        <input id={`${id}-secret`} ref={field} className="secret" readOnly value={token.token} onFocus={(e) => e.target.select()} spellCheck={false} />
        <button type="button" className="primary" onClick={() => void copy()}>
          {t('tokens.copy')}
        </button>
      </div>
      <p className="muted" role="status">
        {copied === 'yes' ? t('tokens.copied') : copied === 'manual' ? t('tokens.copyManually') : ''}
      </p>
      <p className="muted">
        {t('tokens.secretUsage')} {token.expiresAt === null ? t('tokens.secretNever') : t('tokens.secretExpires', { time: formatTime(token.expiresAt) })}
      </p>
      <button type="button" onClick={onDone}>
        {t('tokens.secretDone')}
      </button>
    </section>
  );
}

function RevokeModal({ token, onClose, onRevoked }: { token: TokenAnswer; onClose: () => void; onRevoked: () => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeToken(token.id),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: tokensKeys.all });
      onRevoked();
    },
  });
  return (
    <Dialog
      title={t('tokens.revokeTitle', { name: token.name })}
      role="alertdialog"
      onClose={onClose}
      busy={revoke.isPending}
      actions={
        <>
          <button type="button" onClick={onClose} disabled={revoke.isPending}>
            {t('tokens.cancel')}
          </button>
          <button type="button" className="primary danger" disabled={revoke.isPending} onClick={() => revoke.mutate()}>
            {revoke.isPending ? t('tokens.revoking') : t('tokens.revokeConfirm')}
          </button>
        </>
      }
    >
      <p>{t('tokens.revokeIntro', { name: token.name, id: token.id })}</p>
      {revoke.isError && (
        <p className="field-error" role="alert">
          {message(revoke.error)}
        </p>
      )}
    </Dialog>
  );
}
