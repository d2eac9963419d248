/**
 * `POST /streams/{id}/records/filter` over HTTP: what the filter language takes for records (their own fields
 * per leaf, container properties, no graph leaves), sorting, limits, the `lastUpdatedTime` range an immutable
 * stream needs and its longest span, the properties selected, units, typing, and records past their
 * stream's retention left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { ALL_READINGS, createStream, ids, NOTES, ok, reading, READINGS, setUpSchema, SPACE } from './support/records.js';

let h: Harness;
/** How far the server's clock runs ahead of the real one. */
let ahead = 0;
const DAY = 86_400_000;
const P = (p: string) => [SPACE, 'Reading', p];

beforeAll(async () => {
  // Records of the Short template are kept a minute, which the server's clock can pass without the test's token expiring.
  const templates = { Short: { type: 'Immutable', dataDeletedAfter: 'PT1M', maxFilteringInterval: 'PT10M', maxRecordsTotal: 100, maxGigaBytesTotal: 1 } };
  h = await startHarness({}, { STRATA_STREAM_TEMPLATES: JSON.stringify(templates) }, { now: () => Date.now() + ahead });
  await setUpSchema(h);
  await createStream(h, 'live', 'BasicLiveData');
  await createStream(h, 'log', 'ImmutableTestStream');
  await ok(
    h,
    '/streams/live/records',
    {
      items: [
        reading('a', { value: 3, pressure: 2, level: 'low', labels: ['x'] }, 'first'),
        reading('b', { value: 1, pressure: 1.5, level: 'high' }),
        reading('c', { value: 2 }),
        reading('d', {}),
      ],
    },
    202,
  );
});
afterAll(() => h.close());

const filter = (body: Record<string, unknown>, stream = 'live') => h.post(`/streams/${stream}/records/filter`, body);

describe('the filter language for records', () => {
  it("filters on container properties and on the records' own fields where each leaf takes them", async () => {
    expect(ids((await ok(h, '/streams/live/records/filter', { filter: { range: { property: P('value'), gt: 1 } } })).items)).toEqual(['a', 'c']);
    expect(ids((await ok(h, '/streams/live/records/filter', { filter: { prefix: { property: ['externalId'], value: 'b' } } })).items)).toEqual(['b']);
    expect(ids((await ok(h, '/streams/live/records/filter', { filter: { hasData: [NOTES] } })).items)).toEqual(['a']);
    expect(ids((await ok(h, '/streams/live/records/filter', { filter: { range: { property: ['createdTime'], gt: 0 } }, limit: 1000 })).items)).toEqual(['a', 'b', 'c', 'd']);
    const ex = await ok(h, '/streams/live/records/filter', { filter: { and: [{ exists: { property: P('labels') } }, { not: { equals: { property: ['space'], value: 'other' } } }] } });
    expect(ids(ex.items)).toEqual(['a']);
  });

  it('refuses what records do not have, naming the place', async () => {
    const bad = async (f: unknown) => errorMessage(await filter({ filter: f }), 400);
    expect(await bad({ range: { property: ['externalId'], gt: 'a' } })).toBe('filter.range.property: range on records takes ["createdTime"], ["lastUpdatedTime"] or a container property [space, container, property]');
    expect(await bad({ exists: { property: ['space'] } })).toBe('filter.exists.property: exists on records takes a container property [space, container, property]');
    expect(await bad({ equals: { property: ['version'], value: 1 } })).toContain('records have no field "version"');
    expect(await bad({ equals: { property: ['node', 'externalId'], value: 'a' } })).toContain('expected a record property');
    expect(await bad({ equals: { property: [SPACE, 'Reading/v1', 'tag'], value: 'a' } })).toContain('not on views');
    expect(await bad({ nested: { scope: P('tag'), filter: { matchAll: {} } } })).toBe('filter.nested: records have no nested filter (it is about instances of the graph)');
    expect(await bad({ hasData: [{ type: 'view', space: SPACE, externalId: 'V', version: '1' }] })).toContain('records have data in containers');
    const missing = await filter({ filter: { equals: { property: [SPACE, 'Ghost', 'x'], value: 1 } } });
    expect(errorMessage(missing, 400)).toBe('filter.equals.property: one or more containers do not exist: rs:Ghost');
    expect(missing.body.error.missing).toEqual([{ type: 'container', space: SPACE, externalId: 'Ghost' }]);
    expect(await bad({ equals: { property: P('nope'), value: 1 } })).toBe('filter.equals.property: the container rs:Reading has no property "nope"');
    expect(await bad({ equals: { property: P('value'), value: 'x' } })).toContain('filter.equals.value: expected a number');
  });
});

describe('sorting and limits', () => {
  it('answers records in the order of lastUpdatedTime unless sorted, at most limit of them (10 by default)', async () => {
    expect(ids((await ok(h, '/streams/live/records/filter', {})).items)).toEqual(['a', 'b', 'c', 'd']);
    const sorted = await ok(h, '/streams/live/records/filter', { sort: [{ property: P('value'), direction: 'descending' }], limit: 3 });
    expect(ids(sorted.items)).toEqual(['a', 'c', 'b']);
    const byLevel = await ok(h, '/streams/live/records/filter', { sort: [{ property: P('level') }, { property: ['externalId'], direction: 'descending' }] });
    expect(ids(byLevel.items)).toEqual(['b', 'a', 'd', 'c']);
    expect(errorMessage(await filter({ sort: [{ property: P('labels') }] }), 400)).toContain('sort[0].property: ["rs","Reading","labels"] is a list of text property');
    expect(errorMessage(await filter({ limit: 1001 }), 400)).toContain('limit');
    expect(errorMessage(await filter({ sort: Array.from({ length: 6 }, () => ({ property: ['externalId'] })) }), 400)).toContain('sort');
  });
});

describe('the lastUpdatedTime range', () => {
  it('is needed, with a lower bound, on an immutable stream, and spans at most its maxFilteringInterval', async () => {
    await ok(h, '/streams/log/records', { items: [reading('l1', {})] }, 202);
    const now = Date.now() + ahead;
    expect(errorMessage(await filter({}, 'log'), 400)).toBe('lastUpdatedTime: is required for the immutable stream "log", with a lower bound (gt or gte)');
    expect(errorMessage(await filter({ lastUpdatedTime: { lt: now } }, 'log'), 400)).toBe('lastUpdatedTime: needs a lower bound, gt or gte');
    expect(errorMessage(await filter({ lastUpdatedTime: { gt: now - 8 * DAY } }, 'log'), 400)).toContain('the stream "log" is read at most P7D');
    expect(errorMessage(await filter({ lastUpdatedTime: { gt: 0, gte: 0 } }, 'log'), 400)).toBe('lastUpdatedTime: gt and gte cannot be combined');
    expect(errorMessage(await filter({ lastUpdatedTime: { gt: 'yesterday' } }, 'log'), 400)).toContain('lastUpdatedTime.gt: expected epoch milliseconds or an ISO 8601 time');
    const iso = new Date(now - DAY).toISOString();
    expect(ids((await ok(h, '/streams/log/records/filter', { lastUpdatedTime: { gte: iso } })).items)).toEqual(['l1']);
    expect(ids((await ok(h, '/streams/log/records/filter', { lastUpdatedTime: { gte: now - 10 * DAY, lt: now - 4 * DAY } })).items)).toEqual([]);
    // A mutable stream takes it, and needs none.
    expect(ids((await ok(h, '/streams/live/records/filter', { lastUpdatedTime: { gt: now + DAY } })).items)).toEqual([]);
  });

  it('leaves out records past their stream’s retention (dataDeletedAfter)', async () => {
    await createStream(h, 'short', 'Short');
    await ok(h, '/streams/short/records', { items: [reading('old', {})] }, 202);
    ahead = 40_000;
    await ok(h, '/streams/short/records', { items: [reading('new', {})] }, 202);
    const range = () => ({ lastUpdatedTime: { gte: Date.now() + ahead - 120_000 } });
    expect(ids((await ok(h, '/streams/short/records/filter', range())).items)).toEqual(['old', 'new']);
    ahead = 61_000;
    expect(ids((await ok(h, '/streams/short/records/filter', range())).items)).toEqual(['new']);
    expect((await ok(h, '/streams/short/records/aggregate', { ...range(), aggregates: { n: { count: {} } } })).aggregates.n.count).toBe(1);
    const synced = await ok(h, '/streams/short/records/sync', { initializeCursor: '1d-ago' });
    expect(ids(synced.items)).toEqual(['new']);
    ahead = 0;
  });
});

describe('what a read answers', () => {
  it('returns the selected containers and properties, none without sources', async () => {
    const none = await ok(h, '/streams/live/records/filter', { filter: { equals: { property: ['externalId'], value: 'a' } } });
    expect(none.items[0].properties).toEqual({});
    const some = await ok(h, '/streams/live/records/filter', {
      filter: { equals: { property: ['externalId'], value: 'a' } },
      sources: [{ source: READINGS, properties: ['value', 'level'] }, { source: NOTES, properties: ['*'] }],
    });
    expect(some.items[0].properties).toEqual({ [SPACE]: { Reading: { value: 3, level: 'low' }, Note: { text: 'first' } } });
    expect(errorMessage(await filter({ sources: [{ source: READINGS, properties: ['nope'] }] }), 400)).toBe('sources[0].properties[0]: the container rs:Reading has no property "nope"');
    expect(errorMessage(await filter({ sources: [...ALL_READINGS, ...ALL_READINGS] }), 400)).toBe('sources[1].source: the container rs:Reading is listed twice');
  });

  it('converts properties with a unit to the units asked for, and gives their types', async () => {
    const body = { filter: { equals: { property: ['externalId'], value: 'a' } }, sources: [{ source: READINGS, properties: ['pressure', 'value'] }], includeTyping: true };
    const pa = await ok(h, '/streams/live/records/filter', { ...body, targetUnits: { properties: [{ property: P('pressure'), unit: { externalId: 'pressure:pa' } }] } });
    expect(pa.items[0].properties[SPACE].Reading).toEqual({ pressure: 200000, value: 3 });
    expect(pa.typing[SPACE].Reading.pressure).toMatchObject({ type: { type: 'float64', list: false, unit: { externalId: 'pressure:pa' } }, nullable: true });
    expect(pa.typing[SPACE].Reading.value.type).toEqual({ type: 'float64', list: false });
    const psi = await ok(h, '/streams/live/records/filter', { ...body, targetUnits: { unitSystemName: 'Imperial' } });
    expect(psi.items[0].properties[SPACE].Reading.pressure).toBeCloseTo(29.0075, 3);
    const bad = (targetUnits: unknown) => filter({ ...body, targetUnits });
    expect(errorMessage(await bad({ properties: [{ property: P('value'), unit: { externalId: 'pressure:pa' } }] }), 400)).toContain('has no unit to convert from');
    expect(errorMessage(await bad({ properties: [{ property: P('pressure'), unit: { externalId: 'temperature:deg_c' } }] }), 400)).toContain('measures Temperature');
    expect(errorMessage(await bad({ unitSystemName: 'Martian' }), 400)).toBe('targetUnits.unitSystemName: "Martian" is not a unit system of the units catalog');
    expect(errorMessage(await bad({}), 400)).toBe('targetUnits: give exactly one of properties and unitSystemName');
  });
});
