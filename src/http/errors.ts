/**
 * The one place where API errors are defined. Every 4xx/5xx the server sends has the spec's shape:
 * `{"error": {"code": <http status>, "message": "...", ...extra}}`.
 */
import { STATUS_CODES } from 'node:http';
import { Type } from '@sinclair/typebox';
import { jsonResponseText } from './json-text.js';

export type IdentifierRef = { id: number } | { externalId: string } | Record<string, unknown>;

export interface ErrorExtras {
  missing?: IdentifierRef[];
  duplicated?: IdentifierRef[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly extras: ErrorExtras;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, extras: ErrorExtras = {}, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.extras = extras;
    this.headers = headers;
  }

  body(): { error: { code: number; message: string } & ErrorExtras } {
    return { error: { code: this.status, message: this.message, ...this.extras } };
  }
}

const IdentifierList = (description: string) => Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description }));

/** The error shape as a schema, for the OpenAPI document (openapi.ts). */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.Integer({ description: 'The HTTP status of the answer' }),
    message: Type.String({ description: 'What was wrong, and where in the request' }),
    missing: IdentifierList('The identifiers that name no item (400)'),
    duplicated: IdentifierList('The identifiers taken already, or named more than once in the request'),
  }),
});

export const badRequest = (message: string, extras?: ErrorExtras) => new ApiError(400, message, extras);
export const unauthorized = (message: string) => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const notImplemented = (message: string) => new ApiError(501, message);

export const missingItems = (missing: IdentifierRef[]) =>
  new ApiError(400, `${missing.length === 1 ? 'An item was' : `${missing.length} items were`} not found: ${describeRefs(missing)}`, {
    missing,
  });

export const duplicatedItems = (duplicated: IdentifierRef[], status = 409) =>
  new ApiError(
    status,
    status === 409
      ? `Duplicate ${identifierKinds(duplicated)}: ${describeRefs(duplicated)} already exist${duplicated.length === 1 ? 's' : ''}`
      : `The request names the same item more than once: ${describeRefs(duplicated)}`,
    { duplicated },
  );

/** What kind of identifiers a `duplicated` list holds, for its message. */
function identifierKinds(refs: IdentifierRef[]): string {
  // A declared key of several fields (a version under its parent) is named as keys.
  if (refs.some((r) => Object.keys(r).some((k) => k !== 'externalId' && k !== 'instanceId'))) return 'keys';
  const instance = refs.some((r) => 'instanceId' in r);
  const external = refs.some((r) => 'externalId' in r);
  return instance && external ? 'external ids and instance ids' : instance ? 'instance ids' : 'external ids';
}

/** Fastify's router refuses a path before any route or hook runs: bad percent-encoding, or an over-long segment. */
export function routerError(code: string | undefined, url: string, maxParamLength: number): ApiError {
  const path = JSON.stringify(url.length > 200 ? `${url.slice(0, 200)}...` : url);
  return code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new ApiError(414, `A segment of the path ${path} is longer than ${maxParamLength} characters`)
    : badRequest(`The path ${path} is not a valid URL (check its percent-encoding)`);
}

export const bodyTooLarge = (limit: number) => new ApiError(413, `The request body is larger than the limit of ${limit} bytes`);

/**
 * The response for a request that Node's HTTP parser refused (so no route, hook or error handler sees it),
 * as HTTP/1.1 text to write on the socket before it is closed.
 */
export function malformedRequestResponse(code: string | undefined, limits: { maxHeaderBytes: number; headersTimeoutMs: number; requestTimeoutMs: number }): string {
  const seconds = (ms: number) => `${ms / 1000} s`;
  return code === 'HPE_HEADER_OVERFLOW'
    ? rawErrorResponse(new ApiError(431, `The request line and headers are larger than ${limits.maxHeaderBytes} bytes`))
    : code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? rawErrorResponse(
          new ApiError(
            408,
            `The request was not received in time: its headers must arrive within ${seconds(limits.headersTimeoutMs)}, all of it within ${seconds(limits.requestTimeoutMs)}`,
          ),
        )
      : rawErrorResponse(badRequest(`The request is not valid HTTP/1.1${code ? ` (${code})` : ''}`));
}

/** An error as HTTP/1.1 text, for a socket that no route answers on; the connection closes after it. */
export function rawErrorResponse(error: ApiError): string {
  const body = jsonResponseText(error.body());
  const headers = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`;
}

function describeRefs(refs: IdentifierRef[]): string {
  const shown = refs.slice(0, 5).map((r) => JSON.stringify(r));
  return shown.join(', ') + (refs.length > 5 ? ` and ${refs.length - 5} more` : '');
}

/** Turns a JSON-pointer-like path (`/items/3/metadata`) into the dotted form used in messages (`items[3].metadata`). */
export function formatPath(segments: ReadonlyArray<string | number>): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number' || /^\d+$/.test(s)) out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

export function pointerToSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}
