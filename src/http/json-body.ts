/**
 * Request bodies as JSON. A body must be UTF-8 and its strings must be Unicode text: invalid UTF-8 bytes and
 * unpaired surrogate escapes (`"\ud800"`) are refused with a 400 rather than stored changed. SQLite keeps
 * text as UTF-8, which cannot hold a lone surrogate, so such a value would be stored as other characters than
 * the response showed, and could not be found again by the value the client sent.
 */
import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';
import { badRequest, formatPath } from './errors.js';

declare global {
  interface String {
    /** ES2024 (Node 20 has it; the project's TypeScript lib is ES2022). */
    isWellFormed(): boolean;
  }
}

/** A surrogate code unit written as a JSON escape: the only way a lone surrogate reaches a parsed string. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw badRequest('The request body is empty but Content-Type is application/json; send a JSON object');
  if (!isUtf8(raw)) throw badRequest('The request body is not valid UTF-8');
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const message = (err as Error).message;
    if (/forbidden prototype property/.test(message)) {
      throw badRequest('The request body has a key "__proto__" or "constructor.prototype", which is not allowed');
    }
    throw badRequest(`The request body is not valid JSON: ${message}`);
  }
  if (text.includes('\\u') && SURROGATE_ESCAPE.test(text)) rejectLoneSurrogates(value, []);
  return value;
}

function rejectLoneSurrogates(value: unknown, path: Array<string | number>): void {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw badRequest(`${formatPath(path) || 'request body'}: ${UNPAIRED}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => rejectLoneSurrogates(v, [...path, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (!key.isWellFormed()) throw badRequest(`${formatPath(path) || 'request body'}: a key ${UNPAIRED}`);
      rejectLoneSurrogates(v, [...path, key]);
    }
  }
}

const UNPAIRED = 'contains an unpaired UTF-16 surrogate escape (such as "\\ud800"), which is not a Unicode character';
