/**
 * Property values checked against their container property's type: the 400 naming the place when a value
 * does not fit, and the form the service keeps (timestamps as epoch milliseconds, float32 rounded, direct
 * relations as `{space, externalId}`), and back to the form clients read.
 *
 * Limits: text up to `maxTextSize` (default 128 000) UTF-8 bytes, no NUL; a text list up to 128 000 bytes in
 * all; json an object of at most 256 keys of at most 128 characters, each value at most 10 240 bytes and the
 * whole at most 40 960 bytes as UTF-8 JSON (a json list shares the 40 960); lists up to `maxListSize`
 * (default 1000, or 100 for direct relations); integers within their type (int64 within ±(2^53 − 1), the
 * integers a JSON number carries exactly); floats finite (float32 within its range).
 */
import { FloatValue } from '../../http/json-text.js';
import { isPlainObject } from '../../query/filter.js';
import { fail, type DirectRelationReference, type Path } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { isFloatType, isList, listSizeLimit, textSizeLimit, type PropertyType } from './property-types.js';
import { formatTimestamp, isDate, parseTimestamp } from './timestamps.js';

/** A property value as the service keeps it. */
export type StoredScalar = string | number | boolean | DirectRelationReference | Record<string, unknown>;
export type StoredValue = StoredScalar | StoredScalar[];

const SPACE = /^[a-zA-Z][a-zA-Z0-9_-]{0,41}[a-zA-Z0-9]?$/;
const FLOAT32_MAX = 3.4028234663852886e38;

export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return 'an object';
}

/** How a type is named in messages: `int32`, `list of text`, `enum (open, closed)`. */
export function describeType(t: PropertyType): string {
  if (t.type === 'enum') return `enum (${Object.keys(t.values).join(', ')})`;
  const name = t.type === 'direct' ? 'direct relation' : t.type;
  return t.list ? `list of ${name}` : name;
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

function textValue(v: unknown, t: PropertyType, path: Path): string {
  if (typeof v !== 'string') fail(path, `expected text for the ${describeType(t)} property, got ${describeValue(v)}`);
  if (v.includes('\u0000')) fail(path, 'text must not contain the NUL character');
  const max = textSizeLimit(t);
  const bytes = utf8Bytes(v);
  if (bytes > max) fail(path, `text of ${bytes} bytes is longer than the property's limit of ${max} bytes (UTF-8)`);
  return v;
}

/** `{space, externalId}` of a node, exactly those two fields. */
export function nodeReference(v: unknown, path: Path, what = 'a direct relation'): DirectRelationReference {
  if (!isPlainObject(v) || typeof v.space !== 'string' || typeof v.externalId !== 'string') {
    fail(path, `expected ${what} {"space": ..., "externalId": ...}, got ${describeValue(v)}`);
  }
  const extra = Object.keys(v).find((k) => k !== 'space' && k !== 'externalId');
  if (extra !== undefined) fail(path, `${what} has only "space" and "externalId", not ${JSON.stringify(extra)}`);
  if (!SPACE.test(v.space)) fail([...path, 'space'], `${JSON.stringify(v.space)} is not a valid space identifier`);
  const x = v.externalId;
  if (x.length < 1 || [...x].length > DM_LIMITS.instanceExternalIdLength || x.includes('\u0000')) {
    fail([...path, 'externalId'], `must be 1 to ${DM_LIMITS.instanceExternalIdLength} characters without NUL`);
  }
  return { space: v.space, externalId: x };
}

function jsonValue(v: unknown, t: PropertyType, path: Path): Record<string, unknown> {
  if (!isPlainObject(v)) {
    fail(path, `expected a JSON object for the ${describeType(t)} property, got ${describeValue(v)} (wrap lists and scalars in an object)`);
  }
  const keys = Object.keys(v);
  if (keys.length > DM_LIMITS.jsonKeys) fail(path, `a JSON object has at most ${DM_LIMITS.jsonKeys} keys, got ${keys.length}`);
  for (const k of keys) {
    if (k.length > DM_LIMITS.jsonKeyLength) fail(path, `the key ${JSON.stringify(k.slice(0, 40))}... is longer than ${DM_LIMITS.jsonKeyLength} characters`);
    const bytes = utf8Bytes(JSON.stringify(v[k]) ?? 'null');
    if (bytes > DM_LIMITS.jsonValueBytes) fail([...path, k], `the value is ${bytes} bytes as JSON; at most ${DM_LIMITS.jsonValueBytes} are allowed`);
  }
  const bytes = utf8Bytes(JSON.stringify(v));
  if (bytes > DM_LIMITS.jsonBytes) fail(path, `the JSON object is ${bytes} bytes; at most ${DM_LIMITS.jsonBytes} are allowed`);
  return v;
}

function integerValue(v: unknown, t: PropertyType, path: Path, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(path, `expected an integer for the ${describeType(t)} property, got ${describeValue(v)}`);
  if (v < min || v > max) fail(path, `${v} is outside the range of ${t.type} (${min} to ${max})`);
  return v;
}

function scalar(v: unknown, t: PropertyType, path: Path): StoredScalar {
  switch (t.type) {
    case 'text':
      return textValue(v, t, path);
    case 'timeseries':
    case 'file':
    case 'sequence': {
      if (typeof v !== 'string' || v.length < 1 || v.length > DM_LIMITS.referenceLength || v.includes('\u0000')) {
        fail(path, `expected the external id (1 to ${DM_LIMITS.referenceLength} characters) of a ${t.type}, got ${describeValue(v)}`);
      }
      return v;
    }
    case 'boolean':
      if (typeof v !== 'boolean') fail(path, `expected true or false for the ${describeType(t)} property, got ${describeValue(v)}`);
      return v;
    case 'int32':
      return integerValue(v, t, path, -(2 ** 31), 2 ** 31 - 1);
    case 'int64':
      return integerValue(v, t, path, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    case 'float32':
    case 'float64': {
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, `expected a number for the ${describeType(t)} property, got ${describeValue(v)}`);
      if (t.type === 'float32') {
        if (Math.abs(v) > FLOAT32_MAX) fail(path, `${v} is outside the range of float32`);
        return Math.fround(v);
      }
      return v;
    }
    case 'timestamp': {
      const ms = typeof v === 'string' ? parseTimestamp(v) : undefined;
      if (ms === undefined) {
        fail(path, `expected a timestamp such as "2024-05-01T12:00:00.000Z" (YYYY-MM-DDTHH:MM:SS[.sss][Z|±HH:MM], years 0001 to 9999), got ${describeValue(v)}`);
      }
      return ms;
    }
    case 'date':
      if (typeof v !== 'string' || !isDate(v)) fail(path, `expected a date such as "2024-05-01" (YYYY-MM-DD, years 0001 to 9999), got ${describeValue(v)}`);
      return v;
    case 'json':
      return jsonValue(v, t, path);
    case 'direct':
      return nodeReference(v, path);
    case 'enum': {
      if (typeof v !== 'string' || !Object.hasOwn(t.values, v)) fail(path, `expected one of the enum's values (${Object.keys(t.values).join(', ')}), got ${describeValue(v)}`);
      if (v === t.unknownValue) fail(path, `${JSON.stringify(v)} is the enum's unknown value, which cannot be written`);
      return v;
    }
  }
}

/** A non-null value checked against its type, in the form the service keeps. */
export function normalizeValue(v: unknown, t: PropertyType, path: Path): StoredValue {
  if (!isList(t)) {
    if (Array.isArray(v)) fail(path, `expected a single value for the ${describeType(t)} property, got a list`);
    return scalar(v, t, path);
  }
  if (!Array.isArray(v)) fail(path, `expected a list for the ${describeType(t)} property, got ${describeValue(v)}`);
  const max = listSizeLimit(t);
  if (v.length > max) fail(path, `a list of ${v.length} values is longer than the property's limit of ${max}`);
  const element: PropertyType = { ...t, list: false } as PropertyType;
  const out = v.map((e, i) => {
    if (e === null) fail([...path, i], 'null is not allowed in a list');
    return scalar(e, element, [...path, i]);
  });
  if (t.type === 'text') {
    const bytes = (out as string[]).reduce((n, s) => n + utf8Bytes(s), 0);
    if (bytes > DM_LIMITS.textBytes) fail(path, `the list's texts are ${bytes} bytes together; at most ${DM_LIMITS.textBytes} are allowed`);
  }
  if (t.type === 'json') {
    const bytes = utf8Bytes(JSON.stringify(out));
    if (bytes > DM_LIMITS.jsonBytes) fail(path, `the list is ${bytes} bytes as JSON; at most ${DM_LIMITS.jsonBytes} are allowed`);
  }
  return out;
}

/** A value of a property as written: null clears a nullable property; a non-nullable one must have a value. */
export function normalizePropertyValue(v: unknown, property: { type: PropertyType; nullable: boolean }, path: Path): StoredValue | null {
  if (v === null) {
    if (!property.nullable) fail(path, 'the property is not nullable');
    return null;
  }
  return normalizeValue(v, property.type, path);
}

/**
 * The form clients read: timestamps as ISO text with the offset `+00:00`, floats as JSON floats (`165.0`),
 * everything else as kept.
 */
export function renderValue(v: StoredValue, t: PropertyType): unknown {
  let each: ((e: StoredScalar) => unknown) | undefined;
  if (t.type === 'timestamp') each = (e) => formatTimestamp(e as number);
  else if (isFloatType(t)) each = (e) => new FloatValue(e as number);
  if (each === undefined) return v;
  return Array.isArray(v) ? v.map((e) => each(e)) : each(v);
}
