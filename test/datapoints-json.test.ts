/**
 * `/timeseries/data/list` renders its response as JSON text without making per-point objects: the text must
 * be exactly what JSON.stringify makes of the response as objects, for every kind of series, value, status
 * and option (outside points, cursors, several items, unknown ids ignored, aggregates among raw queries).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonResponseText } from '../src/http/json-text.js';
import { listDatapoints, listDatapointsObject } from '../src/resources/datapoints/read-service.js';
import type { ListDatapointsBody } from '../src/resources/datapoints/schema.js';
import { sql } from '../src/storage/sql.js';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
let projectId: number;
beforeAll(async () => {
  h = await startHarness();
  projectId = (await h.strata.services.db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
});
afterAll(() => h.close());

const MIN_T = -2_208_988_800_000;
const MAX_T = 4_102_444_799_999;
const T0 = Date.UTC(2024, 0, 1);
const GOOD_CLAMPED = 0x00300000;
const UNCERTAIN = 0x40000000;
const UNCERTAIN_LAST = 0x40900000;
const BAD = 0x80000000;
const NEG_ZERO = '\u0000negative zero\u0000';

/** A deterministic random source, so a failure repeats. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIAL_NUMBERS = [0, NEG_ZERO, -1, 1.5, -2.25, 0.1, 1e-7, -1e-7, 123456789.123, 1e21, -1e21, 9.99e99, -9.99e99, 5e-324, 2 ** 53, -(2 ** 53) - 2, 1 / 3];
const SPECIAL_STRINGS = ['', 'plain', 'quote " and \\ backslash', 'tab\tnewline\nreturn\r', '\u0001\u001f\u007f control', 'unicode ✓ ü 日本 🚀', '\u2028\u2029 separators', '</script>', 'emoji 👍🏽 family 👨‍👩‍👧'];

function numberValue(r: () => number): number | string {
  const k = r();
  if (k < 0.15) return SPECIAL_NUMBERS[Math.floor(r() * SPECIAL_NUMBERS.length)] as number | string;
  if (k < 0.4) return Math.round((r() - 0.5) * 2e6) / 1000;
  if (k < 0.6) return Math.floor((r() - 0.5) * 1e9);
  if (k < 0.8) return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
  return (r() - 0.5) * 10 ** Math.floor(r() * 198 - 99);
}

function stringValue(r: () => number): string {
  if (r() < 0.4) return SPECIAL_STRINGS[Math.floor(r() * SPECIAL_STRINGS.length)];
  return fc.sample(fc.string({ unit: r() < 0.5 ? 'grapheme' : 'binary', maxLength: 20 }), { numRuns: 1, seed: Math.floor(r() * 1e9) })[0].replaceAll('\u0000', '');
}

/** Points for a series: runs of evenly spaced and of irregular timestamps, some with statuses. */
function makePoints(r: () => number, isString: boolean, n: number, withStatus: number, from: number | undefined): Array<Record<string, unknown>> {
  const points: Array<Record<string, unknown>> = [];
  let t = from ?? T0 - Math.floor(r() * 1e11);
  const step = from !== undefined && from > MIN_T ? 1 + Math.floor(r() * 3) : r() < 0.5 ? 1000 : 1 + Math.floor(r() * 100);
  for (let i = 0; i < n; i++) {
    t += r() < 0.8 || (from !== undefined && from > MIN_T && t < 100) ? step : 1 + Math.floor(r() * 1e9);
    if (t > MAX_T) break;
    const p: Record<string, unknown> = { timestamp: t };
    const s = r() < withStatus ? [GOOD_CLAMPED, UNCERTAIN, UNCERTAIN_LAST, BAD, BAD + 0x0400 + 0x0001][Math.floor(r() * 5)] : 0;
    if (s) p.status = { code: s };
    const bad = s >>> 30 === 2;
    if (bad && r() < 0.3) {
      // no value
    } else if (bad && !isString && r() < 0.4) p.value = ['NaN', 'Infinity', '-Infinity'][Math.floor(r() * 3)];
    else p.value = isString ? stringValue(r) : numberValue(r);
    points.push(p);
  }
  return points;
}

async function insert(externalId: string, points: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < points.length; i += 50_000) {
    const text = JSON.stringify({ items: [{ externalId, datapoints: points.slice(i, i + 50_000) }] }).replaceAll(JSON.stringify(NEG_ZERO), '-0');
    const res = await h.request('POST', '/timeseries/data', text);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

interface Made {
  externalId: string;
  id: number;
  isString: boolean;
  first: number;
  last: number;
}
const made: Made[] = [];

async function makeSeries(r: () => number, fields: Record<string, unknown>, n: number, withStatus: number, from?: number): Promise<void> {
  const externalId = `json-${made.length}`;
  const res = await h.post('/timeseries', { items: [{ externalId, ...fields }] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const isString = fields.isString === true;
  const points = makePoints(r, isString, n, withStatus, from);
  if (points.length) await insert(externalId, points);
  const [first, last] = points.length ? [points[0].timestamp as number, points[points.length - 1].timestamp as number] : [T0, T0 + 1];
  made.push({ externalId, id: res.body.items[0].id, isString, first, last });
}

/** The route's text equals JSON.stringify of the objects; returns the objects. */
async function same(body: ListDatapointsBody): Promise<{ items: Array<Record<string, unknown>> }> {
  const objects = await listDatapointsObject(h.strata.services, projectId, body);
  expect((await listDatapoints(h.strata.services, projectId, body)).body).toBe(JSON.stringify(objects));
  return objects as { items: Array<Record<string, unknown>> };
}

describe('list response JSON text', () => {
  beforeAll(async () => {
    const r = rng(20240101);
    await makeSeries(r, {}, 5000, 0);
    await makeSeries(r, { isStep: true, unit: 'm/s "fast"', instanceId: { space: 'sp', externalId: 'json-instance' } }, 4000, 0.05);
    await makeSeries(r, {}, 3000, 0.5, MIN_T + 7);
    await makeSeries(r, {}, 2000, 0.02, -3000);
    await makeSeries(r, { isString: true }, 3000, 0);
    await makeSeries(r, { isString: true, unit: 'ü' }, 2500, 0.3);
    await makeSeries(r, {}, 0, 0);
    // Timestamps at the edges of how digits are written, with -0 and other edge values.
    const edges = [MIN_T, -100000001, -100000000, -99999999, -10, -9, -5, -1, 0, 1, 5, 9, 10, 99, 100, 99999999, 100000000, 100000001, 199999999, 1e12, 1e12 + 1, MAX_T];
    const res = await h.post('/timeseries', { items: [{ externalId: 'json-edges' }] });
    await insert('json-edges', edges.map((timestamp, i) => ({ timestamp, value: SPECIAL_NUMBERS[i % SPECIAL_NUMBERS.length] })));
    made.push({ externalId: 'json-edges', id: res.body.items[0].id, isString: false, first: MIN_T, last: MAX_T });
  }, 60_000);

  it('renders -0, exponents and other number forms as JSON.stringify does', async () => {
    expect(String(-0)).toBe(JSON.stringify(-0));
    let text = '';
    for (const s of made) {
      await same({ items: [{ externalId: s.externalId, start: MIN_T, end: MAX_T + 1, limit: 100_000 }] });
      text += (await listDatapoints(h.strata.services, projectId, { items: [{ externalId: s.externalId, start: MIN_T, end: MAX_T + 1, limit: 100_000, includeStatus: true, ignoreBadDataPoints: false }] })).body;
    }
    // The cases the series were made to hold reached the output.
    for (const part of ['"value":0}', '"value":1e-7}', '"value":1e+21}', '"value":5e-324}', '"value":"NaN"', '"value":"-Infinity"', '\\u0001', '\\"', '🚀', '"timestamp":-22', '"status":{"code":']) {
      expect(text.includes(part), part).toBe(true);
    }
    for (const small of [/"timestamp":-\d{1,5},/, /"timestamp":\d{1,7},/]) expect(small.test(text), String(small)).toBe(true);
  });

  it('matches over random queries, statuses, outside points and treatments', async () => {
    const r = rng(7);
    for (let run = 0; run < 300; run++) {
      const count = 1 + Math.floor(r() * 3);
      const items = Array.from({ length: count }, () => {
        const s = made[Math.floor(r() * made.length)];
        const span = s.last - s.first;
        const a = s.first - 1000 + Math.floor(r() * (span + 2000));
        const b = r() < 0.3 ? MAX_T + 1 : a + 1 + Math.floor(r() * (span + 1000));
        const item: Record<string, unknown> = r() < 0.5 ? { externalId: s.externalId } : { id: s.id };
        Object.assign(item, { start: a, end: b, limit: 1 + Math.floor(r() * (r() < 0.5 ? 50 : 5000)) });
        if (r() < 0.5) item.includeStatus = true;
        if (r() < 0.3) item.ignoreBadDataPoints = false;
        if (r() < 0.3) item.treatUncertainAsBad = false;
        if (r() < 0.25) item.includeOutsidePoints = true;
        if (!s.isString && r() < 0.1) Object.assign(item, { aggregates: ['average', 'count', 'min'], granularity: '1d', limit: 100, includeOutsidePoints: undefined });
        return item;
      });
      const body: Record<string, unknown> = { items };
      if (r() < 0.3) {
        items.splice(Math.floor(r() * items.length), 0, { externalId: 'no-such-series', start: 0, end: 1000 });
        body.ignoreUnknownIds = true;
      }
      if (r() < 0.2) body.includeStatus = true;
      await same(JSON.parse(JSON.stringify(body)) as ListDatapointsBody);
    }
  });

  it('matches page after page, following nextCursor', async () => {
    const r = rng(11);
    for (const s of made.filter((m) => m.last - m.first > 1 && m.externalId !== 'json-edges')) {
      for (const includeStatus of [false, true]) {
        const query = { externalId: s.externalId, start: MIN_T, end: MAX_T + 1, limit: 1 + Math.floor(r() * 900), includeStatus, ignoreBadDataPoints: r() < 0.5 };
        let cursor: string | undefined;
        let pages = 0;
        let points = 0;
        do {
          const res = await same({ items: [{ ...query, ...(cursor ? { cursor } : {}) }] } as ListDatapointsBody);
          const item = res.items[0];
          points += (item.datapoints as unknown[]).length;
          cursor = item.nextCursor as string | undefined;
          pages++;
        } while (cursor);
        expect(pages).toBeGreaterThan(1);
        expect(points).toBeGreaterThan(0);
      }
    }
  });

  it('is what the route sends', async () => {
    const body = { items: [{ externalId: made[2].externalId, start: MIN_T, end: MAX_T + 1, limit: 500, includeStatus: true }, { id: made[4].id, start: MIN_T, end: MAX_T + 1, limit: 300 }] };
    const res = await h.strata.app.inject({
      method: 'POST',
      url: `${h.base}/timeseries/data/list`,
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(jsonResponseText(await listDatapointsObject(h.strata.services, projectId, body as ListDatapointsBody)));
  });
});
