/**
 * No records request makes the server answer 500: filters, sorts, aggregate trees and sync requests built at
 * random from the records' own vocabulary (their properties of every type, fields, bounds, intervals, units),
 * valid or not, each answered below 500, in the error shape when refused.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';
import { createStream, ok, reading, setUpSchema, SPACE } from './support/records.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  await setUpSchema(h);
  await createStream(h, 'fuzz', 'BasicLiveData');
  await ok(
    h,
    '/streams/fuzz/records',
    {
      items: Array.from({ length: 30 }, (_, i) =>
        reading(`f${i}`, { value: i % 7, pressure: i / 3, count: i, at: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000 * 13).toISOString(), ok: i % 2 === 0, labels: [`l${i % 3}`], level: i % 2 ? 'low' : 'high' }, i % 4 ? undefined : 'note'),
      ),
    },
    202,
  );
});
afterAll(() => h.close());

const R = (p: string) => [SPACE, 'Reading', p];
const anyProperty = fc.oneof(
  fc.constantFrom('tag', 'value', 'pressure', 'count', 'at', 'ok', 'labels', 'level', 'site', 'nope').map(R),
  fc.constantFrom(['space'], ['externalId'], ['createdTime'], ['lastUpdatedTime'], ['version'], [SPACE, 'Note', 'text'], [SPACE, 'Ghost', 'x'], [], ['a', 'b']),
);
const anyValue = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', 'high', 'low', 'l1', '2025-01-01T00:00:00Z', '2025-01-01', 'x'.repeat(300)),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string({ maxLength: 5 }),
  fc.constantFrom([], ['l1'], [1, 2], { space: SPACE, externalId: 'f1' }),
);
const number = fc.oneof(fc.integer({ min: -5, max: 40 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }));
const time = fc.integer({ min: Date.UTC(2024, 11, 1), max: Date.UTC(2025, 2, 1) }).map((ms) => new Date(ms).toISOString());
/** Properties with values of their type, mostly; now and then anything. */
const typed: Array<[fc.Arbitrary<string[]>, fc.Arbitrary<unknown>]> = [
  [fc.constantFrom('value', 'pressure', 'count').map(R), number],
  [fc.constantFrom(R('tag'), R('site'), ['externalId'], ['space']), fc.constantFrom('f1', 'f2', 'north', 'rs', 'f', '')],
  [fc.constantFrom(R('at'), ['createdTime'], ['lastUpdatedTime']), time],
  [fc.constant(R('ok')), fc.boolean()],
  [fc.constant(R('level')), fc.constantFrom('low', 'high')],
];
const pair = fc.oneof(
  { arbitrary: fc.oneof(...typed.map(([p, v]) => fc.tuple(p, v))), weight: 6 },
  { arbitrary: fc.tuple(anyProperty, anyValue), weight: 1 },
);
const leaf = fc.oneof(
  pair.map(([property, value]) => ({ equals: { property, value } })),
  fc.tuple(pair, fc.array(pair, { maxLength: 2 })).map(([[property, value], more]) => ({ in: { property, values: [value, ...more.map(([, v]) => v)] } })),
  fc.tuple(pair, pair).map(([[property, gt], [, lte]]) => ({ range: { property, gt, lte } })),
  pair.map(([property, value]) => ({ prefix: { property, value } })),
  anyProperty.map((property) => ({ exists: { property } })),
  fc.constantFrom('l0', 'l1', 'l2', 3).map((v) => ({ containsAny: { property: R('labels'), values: [v] } })),
  fc.constantFrom('l0', 'l1', 'l2', 3).map((v) => ({ containsAll: { property: R('labels'), values: [v] } })),
  fc.record({ hasData: fc.constantFrom([{ type: 'container', space: SPACE, externalId: 'Note' }], [{ type: 'view', space: SPACE, externalId: 'V', version: '1' }], [{}]) }),
  fc.constantFrom({ matchAll: {} }, { nested: {} }, { overlaps: {} }, {}),
);
const filter = fc.letrec((tie) => ({
  f: fc.oneof({ depthSize: 'small' }, leaf, fc.record({ and: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }), fc.record({ not: tie('f') })),
})).f;

const interval = fc.oneof({ arbitrary: fc.constantFrom('1s', '1m', '1h', '1d', '1w', '1M', '1q', '1y'), weight: 4 }, { arbitrary: fc.constantFrom('2d', '', '5ms', '0s', '999999999999d', '7h'), weight: 1 });
const numbers = fc.constantFrom('value', 'pressure', 'count').map(R);
const metric = fc.oneof(
  ...['avg', 'sum', 'min', 'max'].map((k) => fc.record({ [k]: fc.record({ property: fc.oneof({ arbitrary: numbers, weight: 4 }, { arbitrary: anyProperty, weight: 1 }) }) })),
  fc.record({ count: fc.record({ property: anyProperty }, { requiredKeys: [] }) }),
);
const id = fc.stringMatching(/^[a-z]{3,6}$/);
const tree = fc.letrec((tie) => ({
  aggs: fc.dictionary(fc.oneof({ arbitrary: id, weight: 8 }, { arbitrary: fc.constantFrom('_count', 'a.b', 'x>y', ''), weight: 1 }), tie('agg'), { minKeys: 1, maxKeys: 3 }),
  subs: fc.option(tie('aggs'), { nil: undefined }),
  agg: fc.oneof(
    { depthSize: 'small' },
    metric,
    fc.record({ movingFunction: fc.record({ bucketsPath: fc.constantFrom('_count', 'abc', 'x>y'), window: fc.integer({ min: 0, max: 5 }), function: fc.constantFrom('MovingFunctions.sum', 'MovingFunctions.linearWeightedAvg', 'MovingFunctions.min') }) }),
    fc.record({ uniqueValues: fc.record({ property: fc.oneof(fc.constantFrom('tag', 'level', 'ok', 'count', 'site', 'at', 'labels').map(R), fc.constant(['space'])), size: fc.integer({ min: 1, max: 5 }), aggregates: tie('subs') }, { requiredKeys: ['property'] }) }),
    fc.record({ numberHistogram: fc.record({ property: numbers, interval: fc.constantFrom(1, 2.5, 10, 0.5, 0), hardBounds: fc.record({ min: number, max: number }, { requiredKeys: [] }), aggregates: tie('subs') }, { requiredKeys: ['property', 'interval'] }) }),
    fc.oneof(
      fc.record({ timeHistogram: fc.record({ property: fc.constantFrom(R('at'), ['createdTime']), calendarInterval: interval, hardBounds: fc.record({ min: time, max: time }, { requiredKeys: [] }), aggregates: tie('subs') }, { requiredKeys: ['property', 'calendarInterval'] }) }),
      fc.record({ timeHistogram: fc.record({ property: fc.constant(R('at')), fixedInterval: fc.constantFrom('12h', '1d', '90m', '1ms'), aggregates: tie('subs') }, { requiredKeys: ['property', 'fixedInterval'] }) }),
    ),
    fc.record({ filters: fc.record({ filters: fc.array(filter, { minLength: 1, maxLength: 3 }), aggregates: tie('subs') }, { requiredKeys: ['filters'] }) }),
  ),
})).aggs;
const targetUnits = fc.oneof(
  { arbitrary: fc.constantFrom(undefined, { unitSystemName: 'SI' }, { unitSystemName: 'Imperial' }, { properties: [{ property: R('pressure'), unit: { externalId: 'pressure:pa' } }] }), weight: 6 },
  { arbitrary: fc.record({ unitSystemName: fc.constantFrom('x') }), weight: 1 },
  {
    arbitrary: fc.record({ properties: fc.array(fc.record({ property: fc.constantFrom(R('pressure'), R('value')), unit: fc.record({ externalId: fc.constantFrom('pressure:pa', 'temperature:deg_c') }) }), { minLength: 1, maxLength: 2 }) }),
    weight: 1,
  },
);

async function refusedOrAnswered(path: string, body: unknown): Promise<void> {
  const res = await h.post(path, body);
  expect(res.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  if (res.status >= 400) expect(res.body.error.code).toBe(res.status);
}

describe('records requests at random', () => {
  it('filter and sync', async () => {
    await fc.assert(
      fc.asyncProperty(filter, fc.array(fc.record({ property: fc.oneof({ arbitrary: fc.constantFrom('value', 'tag', 'at', 'level').map(R), weight: 4 }, { arbitrary: anyProperty, weight: 1 }), direction: fc.constantFrom('ascending', 'descending'), nullsFirst: fc.boolean() }), { maxLength: 2 }), targetUnits, async (f, sort, units) => {
        await refusedOrAnswered('/streams/fuzz/records/filter', { filter: f, sort: sort.length ? sort : undefined, targetUnits: units, sources: [{ source: { type: 'container', space: SPACE, externalId: 'Reading' }, properties: ['*'] }], includeTyping: true });
        await refusedOrAnswered('/streams/fuzz/records/sync', { filter: f, initializeCursor: '1d-ago', targetUnits: units, limit: 5 });
      }),
      { numRuns: 150, seed: 41 },
    );
  });

  it('aggregate', async () => {
    await fc.assert(
      fc.asyncProperty(tree, fc.option(filter), targetUnits, async (aggregates, f, units) => {
        await refusedOrAnswered('/streams/fuzz/records/aggregate', { aggregates, ...(f ? { filter: f } : {}), targetUnits: units, includeTyping: true });
      }),
      { numRuns: 500, seed: 42 },
    );
  });
});
