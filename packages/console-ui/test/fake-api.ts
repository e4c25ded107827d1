// A fake console API for component tests: `fetch` answered by handlers per "METHOD path", each call recorded.
import { vi } from 'vitest';

export interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

/** A handler: the answer's JSON body (status 200), or `{status, body}`. */
export type Handler = (call: Call) => unknown;

export interface FakeApi {
  calls: Call[];
  /** The calls to `METHOD path` (path without the query). */
  callsTo(method: string, path: string): Call[];
}

/** An answer with a status of its own (a handler's plain value is a 200). */
class Answer {
  constructor(readonly status: number, readonly body: unknown) {}
}

/** Answers `status` with `body`. */
export const answer = (status: number, body: unknown) => new Answer(status, body);

/** Stubs `fetch` with `handlers` (keyed "GET /api/v1/…"); an unknown route is a 404. */
export function fakeApi(handlers: Record<string, Handler>): FakeApi {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', async (input: string, init: RequestInit = {}) => {
    const url = new URL(input, 'http://console.test');
    const call: Call = { method: init.method ?? 'GET', path: url.pathname, query: url.searchParams, body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined };
    calls.push(call);
    const handler = handlers[`${call.method} ${call.path}`];
    let result: unknown = handler ? handler(call) : answer(404, { error: { code: 'not-found', message: `no route ${call.method} ${call.path}` } });
    let status = 200;
    if (result instanceof Answer) {
      status = result.status;
      result = result.body;
    }
    return new Response(status === 204 ? null : JSON.stringify(result), { status, headers: { 'content-type': 'application/json' } });
  });
  return { calls, callsTo: (method, path) => calls.filter((c) => c.method === method && c.path === path) };
}
