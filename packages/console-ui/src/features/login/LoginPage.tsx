/** `/login`: signs in with a user name and password; back to where the user was (`?redirect=`). */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { isApiError } from '../../api/client';
import { login, sessionKeys } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { LanguageSelect } from '../../app/LanguageSelect';
import { useErrorMessage } from '../../ui/states';

/** A redirect target only within the console (never another origin: `//evil`, `https://…`). */
export function safeRedirect(target: string | undefined): string {
  return target && target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/login') ? target : '/';
}

export function LoginPage({ redirect, expired }: { redirect?: string; expired?: boolean }) {
  const { t } = useI18n();
  const id = useId();
  const router = useRouter();
  const queryClient = useQueryClient();
  const message = useErrorMessage();
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState(false);
  const signIn = useMutation({
    mutationFn: () => login(user.trim(), password),
    onSuccess: (principal) => {
      const { expiresAt: _expiresAt, ...me } = principal;
      queryClient.clear();
      queryClient.setQueryData(sessionKeys.me(), me);
      router.history.push(safeRedirect(redirect));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (user.trim() === '' || password === '') {
      setMissing(true);
      return;
    }
    setMissing(false);
    signIn.mutate();
  };
  const error = signIn.error;
  const errorText = missing
    ? t('login.required')
    : !error
      ? undefined
      : isApiError(error, 'no-auth')
        ? t('login.wrong')
        : isApiError(error, 'too-many-requests')
          ? t('login.rateLimited', { seconds: Number(error.details.retryAfterSeconds ?? 60) })
          : message(error);
  return (
    <main className="login" id="main">
      <form className="card form" onSubmit={submit} aria-labelledby={`${id}-title`} noValidate>
        <h1 id={`${id}-title`}>{t('login.title')}</h1>
        {expired && !errorText && <p className="notice notice-info">{t('login.expired')}</p>}
        <label htmlFor={`${id}-user`}>{t('login.user')}</label>
        <input id={`${id}-user`} name="username" autoComplete="username" value={user} onChange={(e) => setUser(e.target.value)} autoFocus required />
        <label htmlFor={`${id}-password`}>{t('login.password')}</label>
        <input id={`${id}-password`} name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        {errorText && (
          <p className="field-error" role="alert">
            {errorText}
          </p>
        )}
        <button type="submit" className="primary" disabled={signIn.isPending}>
          {signIn.isPending ? t('login.submitting') : t('login.submit')}
        </button>
        <LanguageSelect />
      </form>
    </main>
  );
}
