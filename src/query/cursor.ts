/**
 * Opaque keyset cursors. A cursor names the position after the last item returned (never an offset), is
 * encrypted so the sort values it carries (a metadata value, a name) cannot be read from a URL or a log,
 * and is bound to the query that produced it: reused with other parameters it is refused instead of
 * silently returning a wrong page.
 *
 * Layout (base64url): salt (16 bytes) | server check (4) | AES-256-GCM ciphertext of the position's JSON |
 * GCM tag (16), with the query's canonical text as additional authenticated data. Each cursor is encrypted
 * under its own key, derived from the server's key and the salt, so no key ever meets two messages (random
 * 96-bit nonces under one key would be safe for only about 2^32 cursors). The salt is a MAC of the query
 * and the position (a synthetic IV): the same page of the same query always gets the same cursor, so
 * equal requests get equal responses whichever process or thread reads them. The server check (derived
 * with the key) tells a cursor of another server, or a mangled one, from a cursor of another query, so
 * each gets its own message.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../http/errors.js';

export interface CursorCodec {
  encode(state: unknown, query: unknown): string;
  /** Returns the state, or throws 400 when the cursor is malformed or belongs to another query. */
  decode(cursor: string, query: unknown): unknown;
}

const SALT = 16;
const CHECK = 4;
const TAG = 16;
/** Every cursor has a key of its own, so the nonce need not vary. */
const NONCE = Buffer.alloc(12);

export function createCursorCodec(secret: Buffer): CursorCodec {
  const master = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'strata cursor', 32));
  const saltKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'strata cursor salt', 32));
  /** The cursor's key (32 bytes) and its server check, from its salt. */
  const derive = (salt: Buffer) => {
    const out = createHmac('sha512', master).update(salt).digest();
    return { key: out.subarray(0, 32), check: out.subarray(32, 32 + CHECK) };
  };
  const notOurs = () => badRequest('cursor: not a cursor issued by this server');

  return {
    encode(state, query) {
      const aad = stableStringify(query);
      const plain = JSON.stringify(state);
      const salt = createHmac('sha256', saltKey).update(aad).update('\0').update(plain).digest().subarray(0, SALT);
      const { key, check } = derive(salt);
      const cipher = createCipheriv('aes-256-gcm', key, NONCE).setAAD(Buffer.from(aad));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([salt, check, body, cipher.getAuthTag()]).toString('base64url');
    },
    decode(cursor, query) {
      const raw = Buffer.from(cursor, 'base64url');
      // Buffer.from skips characters outside the alphabet; a cursor must round-trip exactly.
      if (raw.length <= SALT + CHECK + TAG || raw.toString('base64url') !== cursor) throw notOurs();
      const salt = raw.subarray(0, SALT);
      const { key, check } = derive(salt);
      if (!timingSafeEqual(check, raw.subarray(SALT, SALT + CHECK))) throw notOurs();
      const decipher = createDecipheriv('aes-256-gcm', key, NONCE).setAAD(Buffer.from(stableStringify(query)));
      decipher.setAuthTag(raw.subarray(raw.length - TAG));
      let plain: string;
      try {
        plain = Buffer.concat([decipher.update(raw.subarray(SALT + CHECK, raw.length - TAG)), decipher.final()]).toString('utf8');
      } catch {
        throw badRequest('cursor: this cursor does not belong to this query; send it with the same parameters as the request that returned it');
      }
      return JSON.parse(plain);
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
