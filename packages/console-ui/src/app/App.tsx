/** The app: language, query cache and router, wired so that any 401 sends the user to /login and back. */
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { useState } from 'react';
import { sessionKeys } from '../auth/session';
import type { Locale } from '../i18n';
import { I18nProvider } from '../i18n/I18nProvider';
import { createQueryClient } from './queryClient';
import { createAppRouter, type AppRouter } from './router';

/** The query client and router of one app, wired together. */
export function createApp(history?: RouterHistory): { queryClient: QueryClient; router: AppRouter } {
  let router: AppRouter | undefined;
  const queryClient = createQueryClient({
    onUnauthorized: () => {
      if (!router || router.state.location.pathname === '/login') return;
      queryClient.removeQueries({ queryKey: sessionKeys.all });
      void router.navigate({ to: '/login', search: { redirect: router.state.location.href, expired: true } });
    },
  });
  router = createAppRouter(queryClient, history);
  return { queryClient, router };
}

export function App({ history, locale }: { history?: RouterHistory; locale?: Locale }) {
  const [{ queryClient, router }] = useState(() => createApp(history));
  return (
    <I18nProvider {...(locale ? { locale } : {})}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </I18nProvider>
  );
}
