/**
 * CORS for browser applications (the JavaScript SDK runs in browsers): off unless STRATA_CORS_ORIGINS lists
 * origins. A listed origin, and only it, gets its own origin back (never `*`), with credentials allowed; any
 * other origin, and a request without one, gets no CORS header at all. Preflights are answered in the first
 * request hook, before authentication (a preflight carries no token).
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { VERSION_HEADER } from './versioning.js';

/** What the official clients send besides the headers every browser may send: see `@cognite/sdk-core`. */
export const CORS_REQUEST_HEADERS = [
  'accept',
  'authorization',
  'cdf-version',
  'content-encoding',
  'content-type',
  VERSION_HEADER,
  'x-cdp-app',
  'x-cdp-clienttag',
  'x-cdp-sdk',
  'x-request-id',
];

/** Response headers a client reads: the request id to report, the version served, when to retry. */
export const CORS_EXPOSED_HEADERS = ['x-request-id', VERSION_HEADER, 'retry-after', 'x-job-token'];

/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

export async function registerCors(app: FastifyInstance, origins: readonly string[], methods: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  await app.register(cors, {
    // false (not a header without the origin): the plugin then sets nothing at all, not even the credentials flag.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: [...methods],
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
    // An OPTIONS request from a listed origin without Access-Control-Request-Method is answered like a preflight
    // rather than with the plugin's plain-text 400, which is not the API's error shape.
    strictPreflight: false,
  });
}
