/**
 * Every call of the console goes through here: the public API, with the signed-in user's token as its one
 * credential (no cookies), so the console can do no more than the user can with curl.
 */
import { currentSession, sessionEnded } from './auth';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function call<T = any>(path: string, body?: unknown, method?: string): Promise<T> {
  const session = currentSession();
  if (!session) {
    sessionEnded('Your sign-in has expired: sign in again to go on.');
    throw new ApiFailure(401, 'Not signed in');
  }
  const res = await fetch(path, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    credentials: 'omit',
    headers: { authorization: `Bearer ${session.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'x-cdp-app': 'strata-console' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  const message = `${res.status}: ${parsed?.error?.message ?? res.statusText}`;
  // 401: the token expired or was revoked since sign-in (a 403 is a refusal of this operation only).
  if (res.status === 401) sessionEnded(`The API no longer accepts your sign-in (${message}): sign in again to go on.`);
  if (!res.ok) throw new ApiFailure(res.status, message);
  return parsed as T;
}

/** A call under the project's address: `/api/v1/projects/{project}{path}`. */
export function projectCall<T = any>(project: string, path: string, body?: unknown, method?: string): Promise<T> {
  return call<T>(`/api/v1/projects/${encodeURIComponent(project)}${path}`, body, method);
}

export interface Page<T> {
  items: T[];
  nextCursor?: string | null;
}
