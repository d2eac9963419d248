/**
 * Opaque, signed keyset cursors. A cursor names the position after the last item returned (never an offset)
 * and is bound to the query that produced it: reused with other parameters it is refused instead of
 * silently returning a wrong page.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../http/errors.js';

export interface CursorCodec {
  encode(state: unknown, query: unknown): string;
  /** Returns the state, or throws 400 when the cursor is malformed or belongs to another query. */
  decode(cursor: string, query: unknown): unknown;
}

export function createCursorCodec(secret: Buffer): CursorCodec {
  const mac = (payload: string, query: unknown) =>
    createHmac('sha256', secret).update(stableStringify(query)).update('\0').update(payload).digest().subarray(0, 16);

  return {
    encode(state, query) {
      const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
      return `${payload}.${mac(payload, query).toString('base64url')}`;
    },
    decode(cursor, query) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw badRequest('cursor: not a cursor issued by this server');
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(payload, query);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw badRequest(
          'cursor: this cursor does not belong to this query; send it with the same parameters as the request that returned it',
        );
      }
      try {
        return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw badRequest('cursor: not a cursor issued by this server');
      }
    },
  };
}

/** JSON with object keys sorted, so equal queries give equal text whatever the key order. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
