/**
 * Export and import of a namespace's jobs: the `{jobs: [...]}` document of `orrery apply -f`, in
 * YAML or JSON. The API client speaks JSON only; these two need the document as text (a YAML
 * answer to save as a file, a YAML body to send), so they call `fetch` themselves — with the same
 * URL, cookie and error ({@link errorFromAnswer}) as the client.
 */
import type { ImportAnswerBody } from '@orrery/console/api-types';
import { ApiError, apiUrl, errorFromAnswer, seg, type ApiOptions } from '../../api/client';

/** The formats of an export. */
export type ExportFormat = 'yaml' | 'json';

/** An exported document. */
export interface ExportedJobs {
  /** The file name the console suggests (`<namespace>-jobs.yaml`). */
  fileName: string;
  text: string;
  format: ExportFormat;
  /** Jobs left out because their stored config is not valid (`orrery-broken-jobs`). */
  broken: string[];
}

async function send(path: string, init: RequestInit, query?: ApiOptions['query']): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(apiUrl(path, query), { credentials: 'same-origin', ...init });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError(0, 'network', cause instanceof Error ? cause.message : String(cause));
  }
  if (!response.ok) {
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    throw errorFromAnswer(response.status, body, response.statusText);
  }
  return response;
}

/** The file name of a `content-disposition: attachment; filename="…"` header (pure). */
export function attachmentName(header: string | null): string | undefined {
  const match = /filename="([^"]+)"/.exec(header ?? '');
  return match?.[1];
}

/** `GET …/export?format=`: the namespace's valid jobs as one document. */
export async function exportJobs(namespace: string, format: ExportFormat): Promise<ExportedJobs> {
  const response = await send(`/namespaces/${seg(namespace)}/export`, { method: 'GET', headers: { accept: format === 'yaml' ? 'application/yaml' : 'application/json' } }, { format });
  const text = await response.text();
  const broken = (response.headers.get('orrery-broken-jobs') ?? '').split(',').filter(Boolean);
  return { fileName: attachmentName(response.headers.get('content-disposition')) ?? `${namespace}-jobs.${format}`, text, format, broken };
}

/** Whether a document is JSON (it starts with `{` or `[`) or else YAML (pure). */
export function documentFormat(text: string): ExportFormat {
  return /^\s*[[{]/.test(text) ? 'json' : 'yaml';
}

/**
 * `POST …/import[?dryRun=true]`: the document as the user gave it (JSON or YAML, told apart by
 * {@link documentFormat}). A dry run writes nothing and answers the same plan.
 */
/** What an import's document is: an `orrery apply` document, or a JSON export of Saturn job configs. */
export type ImportSource = 'orrery' | 'saturn';

export async function importJobs(namespace: string, text: string, dryRun: boolean, from: ImportSource = 'orrery'): Promise<ImportAnswerBody> {
  // A Saturn export is JSON; an Orrery document YAML or JSON.
  const contentType = from === 'saturn' || documentFormat(text) === 'json' ? 'application/json' : 'application/yaml';
  const response = await send(
    `/namespaces/${seg(namespace)}/import`,
    { method: 'POST', headers: { accept: 'application/json', 'content-type': contentType }, body: text },
    { dryRun: dryRun || undefined, from: from === 'saturn' ? 'saturn' : undefined },
  );
  return (await response.json()) as ImportAnswerBody;
}

/** Offers `text` to the browser as a file download named `fileName`. */
export function saveAsFile(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked after the click has been handled (a synchronous revoke can cancel the download).
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
