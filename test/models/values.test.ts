/**
 * Property values against their container property's type: every type, lists, sizes, nullability, the
 * timestamp and date forms, and the stored and read forms.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PropertyType } from '../../src/resources/models/property-types.js';
import { formatTimestamp, isDate, MAX_TIMESTAMP, MIN_TIMESTAMP, parseTimestamp } from '../../src/resources/models/timestamps.js';
import { normalizePropertyValue, normalizeValue, renderValue } from '../../src/resources/models/values.js';
import { expectApiError } from '../support/dm-schema.js';

const P = ['items', 0, 'sources', 0, 'properties', 'p'];
const at = 'items[0].sources[0].properties.p';
const T = <K extends PropertyType['type']>(type: K, extra: Record<string, unknown> = {}) => ({ type, list: false, ...extra }) as PropertyType;
const L = <K extends PropertyType['type']>(type: K, extra: Record<string, unknown> = {}) => ({ type, list: true, ...extra }) as PropertyType;
const ok = (v: unknown, t: PropertyType) => normalizeValue(v, t, P);
const bad = (v: unknown, t: PropertyType, ...parts: string[]) => expectApiError(() => ok(v, t), 400, at, ...parts);

describe('timestamps and dates', () => {
  it('reads every written form of a timestamp', () => {
    const utc = Date.UTC(2024, 7, 28, 13, 16, 25, 228);
    expect(parseTimestamp('2024-08-28T13:16:25.228Z')).toBe(utc);
    expect(parseTimestamp('2024-08-28T13:16:25.228')).toBe(utc);
    expect(parseTimestamp('2024-08-28T15:16:25.228+02:00')).toBe(utc);
    expect(parseTimestamp('2024-08-28T15:16:25.228+0200')).toBe(utc);
    expect(parseTimestamp('2024-08-28T15:16:25.228+02')).toBe(utc);
    expect(parseTimestamp('2024-08-28T12:46:25.228-00:30')).toBe(utc);
    expect(parseTimestamp('2024-08-28T13:16:25.2Z')).toBe(Date.UTC(2024, 7, 28, 13, 16, 25, 200));
    expect(parseTimestamp('2024-08-28T13:16:25Z')).toBe(Date.UTC(2024, 7, 28, 13, 16, 25));
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBe(MIN_TIMESTAMP);
    expect(parseTimestamp('9999-12-31T23:59:59.999Z')).toBe(MAX_TIMESTAMP);
  });

  it('refuses what is not a timestamp', () => {
    for (const text of ['2024-08-28', '2024-08-28 13:16:25Z', '2024-02-30T00:00:00Z', '2024-08-28T24:00:00Z', '2024-08-28T13:60:00Z', '0000-01-01T00:00:00Z', '2024-08-28T13:16:25.1234Z', '2024-08-28T13:16:25+25:00', '24-08-28T13:16:25Z', '2024-08-28T13:16:25z']) {
      expect(parseTimestamp(text), text).toBeUndefined();
    }
  });

  it('writes timestamps back as UTC with milliseconds, and round-trips every instant of years 1 to 9999', () => {
    expect(formatTimestamp(Date.UTC(2024, 7, 28, 13, 16, 25, 228))).toBe('2024-08-28T13:16:25.228+00:00');
    expect(formatTimestamp(MIN_TIMESTAMP)).toBe('0001-01-01T00:00:00.000+00:00');
    fc.assert(fc.property(fc.integer({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP }), (ms) => parseTimestamp(formatTimestamp(ms)) === ms));
  });

  it('checks dates', () => {
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('0001-01-01')).toBe(true);
    for (const text of ['2023-02-29', '2024-13-01', '0000-01-01', '2024-1-01', '2024-01-01T00:00:00Z']) expect(isDate(text), text).toBe(false);
  });
});

describe('property values', () => {
  it('checks text: type, NUL, UTF-8 size', () => {
    expect(ok('héllo', T('text'))).toBe('héllo');
    bad(3, T('text'), 'expected text');
    bad('a\u0000b', T('text'), 'NUL');
    bad('éé', T('text', { maxTextSize: 3 }), '4 bytes', 'limit of 3');
    expect(ok('éa', T('text', { maxTextSize: 3 }))).toBe('éa');
    bad('x'.repeat(128_001), T('text'), '128000');
  });

  it('checks numbers against their type', () => {
    expect(ok(2147483647, T('int32'))).toBe(2147483647);
    bad(2147483648, T('int32'), 'outside the range of int32');
    bad(-2147483649, T('int32'), 'int32');
    bad(1.5, T('int64'), 'integer');
    bad(2 ** 53, T('int64'), 'int64');
    expect(ok(-(2 ** 53) + 1, T('int64'))).toBe(-(2 ** 53) + 1);
    bad('1', T('int64'), 'integer');
    expect(ok(0.1, T('float32'))).toBe(Math.fround(0.1));
    bad(1e39, T('float32'), 'float32');
    expect(ok(1e39, T('float64'))).toBe(1e39);
    bad('NaN', T('float64'), 'number');
  });

  it('checks booleans, timestamps, dates, references and enums', () => {
    expect(ok(true, T('boolean'))).toBe(true);
    bad(0, T('boolean'), 'true or false');
    expect(ok('2024-01-01T00:00:00Z', T('timestamp'))).toBe(Date.UTC(2024, 0, 1));
    bad(1704067200000, T('timestamp'), 'timestamp');
    bad('yesterday', T('timestamp'), 'timestamp');
    expect(ok('2024-01-01', T('date'))).toBe('2024-01-01');
    bad('2024-01-01T00:00:00Z', T('date'), 'date');
    expect(ok('ts-1', T('timeseries'))).toBe('ts-1');
    bad('', T('file'), 'file');
    bad('x'.repeat(256), T('sequence'), 'sequence');
    const e: PropertyType = { type: 'enum', values: { on: {}, off: {}, unknown: {} }, unknownValue: 'unknown' };
    expect(ok('on', e)).toBe('on');
    bad('ON', e, 'on, off, unknown');
    bad('unknown', e, 'cannot be written');
  });

  it('checks direct relations: exactly space and externalId', () => {
    expect(ok({ space: 'sp', externalId: 'n' }, T('direct'))).toEqual({ space: 'sp', externalId: 'n' });
    bad('sp:n', T('direct'), 'direct relation');
    bad({ space: 'sp', externalId: 'n', type: 'x' }, T('direct'), '"type"');
    expectApiError(() => ok({ space: '1sp', externalId: 'n' }, T('direct')), 400, `${at}.space`);
    expectApiError(() => ok({ space: 'sp', externalId: '' }, T('direct')), 400, `${at}.externalId`);
  });

  it('checks json objects and their limits', () => {
    expect(ok({ a: [1, 2] }, T('json'))).toEqual({ a: [1, 2] });
    bad([1, 2], T('json'), 'a single value');
    bad('x', T('json'), 'JSON object');
    bad(Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, i])), T('json'), 'at most 256 keys');
    bad({ ['k'.repeat(129)]: 1 }, T('json'), 'longer than 128');
    expectApiError(() => ok({ big: 'x'.repeat(10_240) }, T('json')), 400, `${at}.big`, 'at most 10240');
    const many = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'x'.repeat(9000)]));
    bad(many, T('json'), 'at most 40960');
    bad([{ a: 'x'.repeat(9000) }, { a: 'x'.repeat(9000) }, { a: 'x'.repeat(9000) }, { a: 'x'.repeat(9000) }, { a: 'x'.repeat(9000) }], L('json'), 'list', '40960');
  });

  it('checks lists: element types, nulls, sizes', () => {
    expect(ok([1, 2], L('int32'))).toEqual([1, 2]);
    bad(1, L('int32'), 'expected a list');
    bad([1], T('int32'), 'single value');
    expectApiError(() => ok([1, null], L('int32')), 400, `${at}[1]`, 'null');
    expectApiError(() => ok([1, 'x'], L('int32')), 400, `${at}[1]`, 'integer');
    bad(Array.from({ length: 1001 }, () => 1), L('int32'), '1001 values', 'limit of 1000');
    bad(Array.from({ length: 101 }, () => ({ space: 's', externalId: 'n' })), L('direct'), 'limit of 100');
    bad([1, 2, 3], L('int32', { maxListSize: 2 }), 'limit of 2');
    bad(['x'.repeat(70_000), 'y'.repeat(70_000)], L('text'), 'together', '128000');
  });

  it('lets null clear only a nullable property', () => {
    expect(normalizePropertyValue(null, { type: T('text'), nullable: true }, P)).toBeNull();
    expectApiError(() => normalizePropertyValue(null, { type: T('text'), nullable: false }, P), 400, at, 'not nullable');
  });

  it('reads timestamps back as text and everything else as kept', () => {
    expect(renderValue(Date.UTC(2024, 0, 1), T('timestamp'))).toBe('2024-01-01T00:00:00.000+00:00');
    expect(renderValue([0], L('timestamp'))).toEqual(['1970-01-01T00:00:00.000+00:00']);
    expect(renderValue({ space: 's', externalId: 'x' }, T('direct'))).toEqual({ space: 's', externalId: 'x' });
  });
});
