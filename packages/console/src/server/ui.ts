/**
 * The web console's bundle (`packages/console-ui/dist`, built by `npm run build`, `npm start` and
 * `npm test`) served at `/`: its files as they are (hashed `assets/` cached for a year), and
 * `index.html` for every other GET — the UI routes on the client (`/ns/shop/jobs`) — except under the
 * server's own prefixes ({@link SERVER_PREFIXES}), which stay JSON 404s when unknown.
 *
 * Without a bundle, `/` and the client routes answer 503 saying how to build it (HTML to a browser,
 * the JSON error otherwise); the API works either way. The bundle's directory is looked up on every
 * request, so a build made while the console runs is served at once.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import { OrreryError, type HttpApp } from '@orrery/core';

/** Paths the server answers itself: never the UI's index.html (an unknown one is a JSON 404). */
export const SERVER_PREFIXES = ['/api', '/docs', '/healthz', '/metrics'] as const;

/** How long a browser keeps a hashed asset (`assets/*-<hash>.js`), in seconds: a year. */
export const UI_ASSET_MAX_AGE_S = 365 * 24 * 3600;

/** How to build the bundle, in the answer given when it is missing. */
export const UI_BUILD_HINT = 'the web console is not built: run `npm run build` (or `npm start`) in the Orrery checkout, then reload';

/** `packages/console-ui/dist` of the installed workspace, or undefined when the package is not installed. */
export function defaultUiDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@orrery/console-ui/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

/** True for a path the server answers itself (see {@link SERVER_PREFIXES}). */
export function isServerPath(path: string): boolean {
  return SERVER_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** The file under `root` a URL path names, when it is a regular file inside `root` (pure but for stat). */
function fileIn(root: string, path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const full = resolve(root, `.${decoded}`);
  if (!full.startsWith(root + sep)) return undefined;
  try {
    return statSync(full).isFile() ? full.slice(root.length + 1) : undefined;
  } catch {
    return undefined;
  }
}

const MISSING_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orrery — console not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The web console is not built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>) in the Orrery checkout, then reload this page.</p>
<p>The API is served as usual: <a href="/docs">/docs</a>, <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
<p lang="zh-CN">控制台尚未构建：请在 Orrery 目录中运行 <code>npm run build</code>（或 <code>npm start</code>）后刷新本页。</p>
</body></html>
`;

/** Adds the UI's routes (`GET /*`) to the console app; `dir` is the bundle's directory. */
export async function serveUi(app: HttpApp, dir: string | undefined): Promise<void> {
  const root = dir === undefined ? undefined : resolve(dir);
  // serve: false — the one wildcard route below decides between a file, index.html and a 404.
  // acceptRanges: false — nothing here needs a range, and a malformed one (two Range headers, say)
  // made the file sender fail with a 500 (found by the HTTP fuzz test).
  await app.register(fastifyStatic, { root: root ?? process.cwd(), serve: false, acceptRanges: false });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (isServerPath(path)) throw new OrreryError('not-found', `no route ${request.method} ${path.slice(0, 200)}`);
    if (root === undefined || !existsSync(join(root, 'index.html'))) {
      if ((request.headers.accept ?? '').includes('text/html')) return reply.code(503).type('text/html; charset=utf-8').send(MISSING_PAGE);
      throw new OrreryError('unavailable', UI_BUILD_HINT, { details: { dir: root ?? null } });
    }
    const file = path === '/' ? undefined : fileIn(root, path);
    if (file === undefined || file === 'index.html') {
      // Always revalidated: it names the current build's hashed assets.
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    }
    if (file.startsWith(`assets${sep}`)) return reply.sendFile(file, { maxAge: UI_ASSET_MAX_AGE_S * 1000, immutable: true });
    return reply.sendFile(file);
  });
}
