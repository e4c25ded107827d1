/**
 * API tokens: the signed-in user's list, create (the answer holds the secret — it is handed to the
 * page once and never put in the query cache), revoke.
 */
import { queryOptions } from '@tanstack/react-query';
import type { TokenAnswer } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';

export const tokensKeys = {
  all: ['tokens'] as const,
  mine: (user: string) => [...tokensKeys.all, 'user', user] as const,
};

/** The signed-in user's tokens (never their secrets), newest first. */
export const myTokensQuery = (user: string) =>
  queryOptions({
    queryKey: tokensKeys.mine(user),
    queryFn: ({ signal }) => api<{ tokens: TokenAnswer[] }>('/tokens', { signal }),
    select: (answer) => [...answer.tokens].sort((a, b) => b.createdAt - a.createdAt),
  });

/** A created token: the listed fields and the secret, shown this once. */
export type CreatedToken = TokenAnswer & { token: string };

export const createToken = (input: { name: string; expiresInDays?: number }) => api<CreatedToken>('/tokens', { method: 'POST', body: input });

export const revokeToken = (id: string) => api<void>(`/tokens/${seg(id)}`, { method: 'DELETE' });

/** Longest token life the API takes, in days. */
export const TOKEN_MAX_DAYS = 3650;
/** Longest token name. */
export const TOKEN_NAME_MAX = 100;
/** The expiry the form starts with, in days. */
export const DEFAULT_DAYS = 90;
