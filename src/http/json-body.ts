/**
 * Request bodies as JSON. A body must be UTF-8 and its strings must be text both stores can keep: invalid
 * UTF-8 bytes, unpaired surrogate escapes (`"\ud800"`) and the NUL character (`"\u0000"`) are refused with a
 * 400 rather than stored changed or failing. Both stores keep text as UTF-8, which cannot hold a lone
 * surrogate (the value would be stored as other characters than the response showed, and could not be found
 * again by the value the client sent), and PostgreSQL's text cannot hold NUL at all.
 *
 * Nesting is limited before the body is parsed: a few kilobytes of brackets (a few bytes gzip'd) would
 * otherwise cost the parser seconds and gigabytes, and every walk over the parsed value a deep stack.
 */
import { isUtf8 } from 'node:buffer';
import { parse as parseLossless } from 'lossless-json';
import sjson from 'secure-json-parse';
import { badRequest, formatPath } from './errors.js';

declare global {
  interface String {
    /** ES2024 (Node 20 has it; the project's TypeScript lib is ES2022). */
    isWellFormed(): boolean;
  }
}

/**
 * A surrogate code unit or NUL written as a JSON escape: the only ways a lone surrogate or a NUL reaches a
 * parsed string (JSON refuses raw control characters in strings).
 */
const UNSTORABLE_ESCAPE = /\\u(?:[dD][89a-fA-F]|0000)/;

export function parseJsonBody(raw: Buffer, maxDepth: number, exactIntegers = false): unknown {
  if (raw.length === 0) throw badRequest('The request body is empty but Content-Type is application/json; send a JSON object');
  if (!isUtf8(raw)) throw badRequest('The request body is not valid UTF-8');
  if (nestsDeeperThan(raw, maxDepth)) {
    throw badRequest(`The request body nests arrays and objects more than ${maxDepth} levels deep; at most ${maxDepth} levels are allowed`);
  }
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
  if (text.includes('\\u') && UNSTORABLE_ESCAPE.test(text)) rejectUnstorableText(value);
  // Read again only when a number may be too long for a double: the checks above have passed.
  return exactIntegers && LONG_DIGIT_RUN.test(text) ? parseWithExactIntegers(text) : value;
}

/** Sixteen digits in a row: the shortest integer beyond 2^53 has as many (it may sit in a string too). */
const LONG_DIGIT_RUN = /\d{16}/;
const INTEGER = /^-?\d+$/;

/** JSON with each integer beyond ±(2^53 − 1) as a BigInt; repeated keys keep their last value, as JSON.parse does. */
function parseWithExactIntegers(text: string): unknown {
  return parseLossless(text, null, {
    parseNumber: (digits) => {
      const n = Number(digits);
      return INTEGER.test(digits) && !Number.isSafeInteger(n) ? BigInt(digits) : n;
    },
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether brackets outside strings open more than `max` levels at some point, in one pass over the bytes
 * (structural characters are ASCII, and no byte of a multi-byte UTF-8 character is). Text that is not JSON
 * may count wrong here; the parser refuses it anyway, at the first byte that is out of place.
 */
function nestsDeeperThan(raw: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** A value met while walking a body, with the way back to the root for the message. */
interface Visit {
  value: unknown;
  key: string | number;
  parent: Visit | undefined;
}

/** Walks the body with a stack of its own (never the call stack), in document order, and refuses the first string no store can keep. */
function rejectUnstorableText(root: unknown): void {
  const pending: Visit[] = [{ value: root, key: '', parent: undefined }];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    const { value } = at;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) throw badRequest(`${where(at)}: ${UNPAIRED}`);
      if (value.includes('\0')) throw badRequest(`${where(at)}: ${NUL}`);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], key: i, parent: at });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [key] of entries) {
        if (!key.isWellFormed()) throw badRequest(`${where(at)}: a key ${UNPAIRED}`);
        if (key.includes('\0')) throw badRequest(`${where(at)}: a key ${NUL}`);
      }
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i][1], key: entries[i][0], parent: at });
    }
  }
}

function where(visit: Visit): string {
  const path: Array<string | number> = [];
  for (let v: Visit | undefined = visit; v?.parent !== undefined; v = v.parent) path.push(v.key);
  return formatPath(path.reverse()) || 'request body';
}

const UNPAIRED = 'contains an unpaired UTF-16 surrogate escape (such as "\\ud800"), which is not a Unicode character';
const NUL = 'contains the character U+0000 (NUL, "\\u0000"), which a text value cannot hold';
