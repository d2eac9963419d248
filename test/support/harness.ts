/**
 * Test harness: an in-process Strata on an in-memory store, spoken to over HTTP (Fastify inject), with a
 * token from its own identity provider, as a client would get one.
 */
import { CONFIG_SECTIONS } from '../../src/areas.js';
import { loadConfig, type Config } from '../../src/config.js';
import { buildApp, type BuildOptions, type Strata } from '../../src/app.js';
import { storeEnv } from './test-store.js';

export interface Harness {
  strata: Strata;
  token: string;
  base: string;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body?: unknown): Promise<Response>;
  get(path: string): Promise<Response>;
  close(): Promise<void>;
}

export interface Response {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
}

export async function startHarness(overrides: Partial<Config> = {}, env: Record<string, string> = {}, build: BuildOptions = {}): Promise<Harness> {
  const config = { ...loadConfig([], { STRATA_DATA_DIR: ':memory:', STRATA_PROJECTS: 'dev,other', ...(build.store ? {} : await storeEnv()), ...env }, CONFIG_SECTIONS), ...overrides };
  // STRATA_TEST_LOG=1 logs the app's errors (a 500's cause), which tests otherwise keep quiet.
  const strata = await buildApp(process.env.STRATA_TEST_LOG ? { ...config, logLevel: 'error' } : config, { logger: !!process.env.STRATA_TEST_LOG, ...build });
  const base = `/api/v1/projects/${config.projects[0]}`;
  const tokenResponse = await strata.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: strata.idp.devClient.clientId,
      client_secret: strata.idp.devClient.secret,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const token = tokenResponse.json().access_token as string;

  async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const url = /^\/(api|\.well-known|oauth2|health|metrics)\b/.test(path) ? path : `${base}${path}`;
    const res = await strata.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) } : {}),
    });
    let parsed: unknown = undefined;
    try {
      parsed = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      parsed = res.body;
    }
    return { status: res.statusCode, body: parsed, headers: res.headers };
  }

  return {
    strata,
    token,
    base,
    request,
    post: (path, body) => request('POST', path, body ?? {}),
    get: (path) => request('GET', path),
    close: () => strata.close(),
  };
}

/** Asserts the spec's error shape and returns the message. */
export function errorMessage(res: Response, status: number): string {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  const e = res.body?.error;
  if (!e || e.code !== status || typeof e.message !== 'string') throw new Error(`not the error shape: ${JSON.stringify(res.body)}`);
  return e.message;
}
