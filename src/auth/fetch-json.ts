/**
 * GET of a JSON document from an identity provider, with a timeout, so a slow or unreachable provider
 * fails one request with a message instead of hanging it.
 */
export const FETCH_TIMEOUT_MS = 5000;

export class FetchError extends Error {}

export async function fetchJson(url: string, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new FetchError(`cannot fetch the ${what} at ${url}: ${cause ?? (err as Error).message}`);
  }
  if (!res.ok) throw new FetchError(`the ${what} at ${url} answered HTTP ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new FetchError(`the ${what} at ${url} is not valid JSON`);
  }
}
