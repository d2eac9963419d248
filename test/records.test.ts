/**
 * Writing records over HTTP: ingest, upsert and delete on mutable and immutable streams, values typed and
 * checked by their record containers (as instance values are), defaults, several containers per record,
 * the bad input refused whole (unknown or non-record containers, wrong types, missing required values,
 * unknown spaces, too many records, records named twice, writes to an immutable stream's records), what
 * record containers may declare, and access: the records' spaces under the scope of streamRecordsAcl, the
 * containers under dataModelsAcl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { ALL_READINGS, createStream, ids, NOTES, ok, reading, READINGS, setUpSchema, SPACE } from './support/records.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('space-writer', 'space-reader', 'no-schema', 'other-schema') });
  await setUpSchema(h);
  await createStream(h, 'live', 'BasicLiveData');
  await createStream(h, 'log', 'ImmutableTestStream');
});
afterAll(() => h.close());

const SINCE = { gte: Date.now() - 3_600_000 };
const filter = (stream: string, body: Record<string, unknown> = {}) =>
  ok(h, `/streams/${stream}/records/filter`, { sources: ALL_READINGS, limit: 1000, ...(stream === 'log' ? { lastUpdatedTime: SINCE } : {}), ...body });

describe('ingest', () => {
  it('stores records typed by their containers, with defaults filled in and data in several containers', async () => {
    await ok(
      h,
      '/streams/live/records',
      {
        items: [
          reading('i1', { value: 1.5, count: 7, at: '2025-01-02T03:04:05.678+01:00', ok: true, labels: ['a', 'b'], level: 'high' }, 'first'),
          reading('i2', { site: 'south' }),
        ],
      },
      202,
    );
    const res = await filter('live', { sources: [...ALL_READINGS, { source: NOTES, properties: ['*'] }], filter: { in: { property: ['externalId'], values: ['i1', 'i2'] } } });
    const [i1, i2] = res.items;
    expect(i1).toEqual({
      space: SPACE,
      externalId: 'i1',
      createdTime: expect.any(Number),
      lastUpdatedTime: i1.createdTime,
      properties: {
        [SPACE]: {
          Reading: { tag: 'i1', value: 1.5, count: 7, at: '2025-01-02T02:04:05.678+00:00', ok: true, labels: ['a', 'b'], level: 'high', site: 'north' },
          Note: { text: 'first' },
        },
      },
    });
    expect(i2.properties).toEqual({ [SPACE]: { Reading: { tag: 'i2', site: 'south' } } });
  });

  it('keeps every record given to an immutable stream, identifiers repeated or not', async () => {
    await ok(h, '/streams/log/records', { items: [reading('dup', { value: 1 }), reading('dup', { value: 2 })] }, 202);
    await ok(h, '/streams/log/records', { items: [reading('dup', { value: 3 })] }, 202);
    const res = await filter('log', { filter: { equals: { property: ['externalId'], value: 'dup' } } });
    expect(res.items.map((r: any) => r.properties[SPACE].Reading.value)).toEqual([1, 2, 3]);
  });

  it('discards the duplicates an immutable stream is given: the identifier and property values of a record it keeps', async () => {
    const twin = (value: number, note?: string) => reading('twin', { value, labels: ['x', 'y'] }, note);
    await ok(h, '/streams/log/records', { items: [twin(1), twin(1), twin(2)] }, 202);
    // The same values in another order of containers and properties; then one with a note more, and the same values under another identifier.
    const reordered = { space: SPACE, externalId: 'twin', sources: [{ source: READINGS, properties: { labels: ['x', 'y'], value: 2, tag: 'twin' } }] };
    await ok(h, '/streams/log/records', { items: [reordered, twin(1, 'n'), { ...twin(1), externalId: 'twin-2' }] }, 202);
    const res = await filter('log', { filter: { prefix: { property: ['externalId'], value: 'twin' } }, sources: [...ALL_READINGS, { source: NOTES, properties: ['*'] }] });
    expect(res.items.map((r: any) => [r.externalId, r.properties[SPACE].Reading.value, r.properties[SPACE].Note?.text ?? null])).toEqual([
      ['twin', 1, null],
      ['twin', 2, null],
      ['twin', 1, 'n'],
      ['twin-2', 1, null],
    ]);
    expect((await h.get('/streams/log?includeStatistics=true')).body.settings.limits.maxRecordsTotal.consumed).toBe(
      (await filter('log', { limit: 1000 })).items.length,
    );
  });

  it('refuses, with 409 naming them, records that exist in a mutable stream; a deleted one can be ingested again', async () => {
    await ok(h, '/streams/live/records', { items: [reading('once', {})] }, 202);
    const again = await h.post('/streams/live/records', { items: [reading('fresh', {}), reading('once', {})] });
    expect(errorMessage(again, 409)).toBeTruthy();
    expect(again.body.error.duplicated).toEqual([{ space: SPACE, externalId: 'once' }]);
    expect(ids((await filter('live', { filter: { equals: { property: ['externalId'], value: 'fresh' } } })).items)).toEqual([]);
    await ok(h, '/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'once' }] });
    await ok(h, '/streams/live/records', { items: [reading('once', { value: 9 })] }, 202);
    expect((await filter('live', { filter: { equals: { property: ['externalId'], value: 'once' } } })).items[0].properties[SPACE].Reading.value).toBe(9);
  });

  it('refuses bad records whole, naming the place', async () => {
    const bad = async (items: unknown[], status = 400) => errorMessage(await h.post('/streams/live/records', { items: [reading('good', {}), ...items] }), status);
    expect(await bad([reading('x', { value: 'high' })])).toBe('items[1].sources[0].properties.value: expected a number for the float64 property, got the string "high"');
    expect(await bad([reading('x', { count: 1.5 })])).toContain('items[1].sources[0].properties.count: expected an integer');
    expect(await bad([reading('x', { level: 'medium' })])).toContain("expected one of the enum's values (low, high)");
    expect(await bad([reading('x', { nope: 1 })])).toBe('items[1].sources[0].properties.nope: the container rs:Reading has no property "nope"');
    expect(await bad([{ space: SPACE, externalId: 'x', sources: [{ source: READINGS, properties: { value: 1 } }] }])).toBe(
      'items[1].sources[0].properties: the container rs:Reading requires "tag", which is not given',
    );
    expect(await bad([{ space: SPACE, externalId: 'x', sources: [{ source: READINGS, properties: { tag: null } }] }])).toContain('not nullable');
    const ghost = await h.post('/streams/live/records', { items: [{ space: SPACE, externalId: 'x', sources: [{ source: { ...READINGS, externalId: 'Ghost' }, properties: {} }] }] });
    expect(errorMessage(ghost, 400)).toBe('One or more containers do not exist: rs:Ghost');
    expect(ghost.body.error.missing).toEqual([{ type: 'container', space: SPACE, externalId: 'Ghost' }]);
    expect(await bad([{ space: SPACE, externalId: 'x', sources: [{ source: READINGS, properties: { tag: 'a' } }, { source: READINGS, properties: { tag: 'b' } }] }])).toContain(
      'items[1].sources[1].source: the container rs:Reading is given twice',
    );
    const nowhere = await h.post('/streams/live/records', { items: [reading('x', {}, undefined, 'nospace')] });
    expect(errorMessage(nowhere, 400)).toBe('One or more spaces do not exist: nospace');
    expect(await bad([reading('x', {}, undefined, 'cdf_cdm')])).toContain('system space');
    expect(await bad(Array.from({ length: 1000 }, (_, i) => reading(`many${i}`, {})))).toContain('items');
    expect(await bad([reading('good', { value: 2 })], 422)).toBe('The request names the same record more than once: rs:good');
    expect(ids((await filter('live', { filter: { equals: { property: ['externalId'], value: 'good' } } })).items)).toEqual([]);
    expect(errorMessage(await h.post('/streams/nowhere/records', { items: [reading('x', {})] }), 404)).toBe('The stream "nowhere" does not exist');
  });

  it('writes records to record containers only, and records only there', async () => {
    await ok(h, '/models/containers', { items: [{ space: SPACE, externalId: 'NodeData', properties: { name: { type: { type: 'text' } } } }] });
    const res = await h.post('/streams/live/records', { items: [{ space: SPACE, externalId: 'x', sources: [{ source: { ...READINGS, externalId: 'NodeData' }, properties: { name: 'n' } }] }] });
    expect(errorMessage(res, 400)).toBe('items[0].sources[0].source: the container rs:NodeData holds data of nodes; records have data in containers with usedFor "record"');
    const node = await h.post('/models/instances', { items: [{ instanceType: 'node', space: SPACE, externalId: 'n1', sources: [{ source: READINGS, properties: { tag: 'x' } }] }] });
    expect(errorMessage(node, 400)).toContain('holds record data');
  });
});

describe('upsert and delete', () => {
  it('replaces records whole in a mutable stream, keeping their creation time; creates the others', async () => {
    await ok(h, '/streams/live/records', { items: [reading('u1', { value: 1, count: 1 }, 'note')] }, 202);
    const before = (await filter('live', { filter: { equals: { property: ['externalId'], value: 'u1' } } })).items[0];
    await ok(h, '/streams/live/records/upsert', { items: [reading('u1', { value: 2 }), reading('u2', { value: 3 })] }, 202);
    const after = await filter('live', { sources: [...ALL_READINGS, { source: NOTES, properties: ['*'] }], filter: { in: { property: ['externalId'], values: ['u1', 'u2'] } } });
    const [u1, u2] = after.items;
    expect(u1.createdTime).toBe(before.createdTime);
    expect(u1.lastUpdatedTime).toBeGreaterThanOrEqual(before.lastUpdatedTime);
    // No partial updates: the count and the note are gone.
    expect(u1.properties).toEqual({ [SPACE]: { Reading: { tag: 'u1', value: 2, site: 'north' } } });
    expect(u2.properties[SPACE].Reading.value).toBe(3);
  });

  it('deletes records of a mutable stream, ignoring unknown ones', async () => {
    await ok(h, '/streams/live/records', { items: [reading('del1', {}), reading('del2', {})] }, 202);
    await ok(h, '/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'del1' }, { space: SPACE, externalId: 'never' }] });
    expect(ids((await filter('live', { filter: { prefix: { property: ['externalId'], value: 'del' } } })).items)).toEqual(['del2']);
  });

  it('refuses upsert and delete on an immutable stream (422), changing nothing', async () => {
    await ok(h, '/streams/log/records', { items: [reading('kept', { value: 1 })] }, 202);
    expect(errorMessage(await h.post('/streams/log/records/upsert', { items: [reading('kept', { value: 2 })] }), 422)).toBe(
      'The stream "log" is immutable: its records cannot be replaced; only mutable streams take this request',
    );
    expect(errorMessage(await h.post('/streams/log/records/delete', { items: [{ space: SPACE, externalId: 'kept' }] }), 422)).toContain('cannot be deleted');
    const res = await filter('log', { filter: { equals: { property: ['externalId'], value: 'kept' } } });
    expect(res.items.map((r: any) => r.properties[SPACE].Reading.value)).toEqual([1]);
  });

  it('refuses a request naming a record twice (422)', async () => {
    const res = await h.post('/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'a' }, { space: SPACE, externalId: 'a' }] });
    expect(errorMessage(res, 422)).toBeTruthy();
    expect(res.body.error.duplicated).toEqual([{ space: SPACE, externalId: 'a' }]);
  });
});

describe('record containers', () => {
  it('refuses what records do not take: indexes, constraints, immutable and auto-incremented properties, references, collations', async () => {
    const apply = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      h.post('/models/containers', { items: [{ space: SPACE, externalId: 'Bad', usedFor: 'record', properties, ...extra }] });
    const t = { type: { type: 'text' } };
    expect(errorMessage(await apply({ a: t }, { indexes: { i: { properties: ['a'] } } }), 400)).toBe('items[0].indexes: a record container has no indexes');
    expect(errorMessage(await apply({ a: t }, { constraints: { u: { constraintType: 'uniqueness', properties: ['a'] } } }), 400)).toContain('has no constraints');
    expect(errorMessage(await apply({ a: { ...t, immutable: true } }), 400)).toContain('items[0].properties.a.immutable');
    expect(errorMessage(await apply({ a: { type: { type: 'int64' }, autoIncrement: true } }), 400)).toContain('items[0].properties.a.autoIncrement');
    expect(errorMessage(await apply({ a: { type: { type: 'timeseries' } } }), 400)).toBe('items[0].properties.a.type.type: a record container cannot hold timeseries references');
    expect(errorMessage(await apply({ a: { type: { type: 'text', collation: 'en' } } }), 400)).toContain('takes no collation');
    expect(errorMessage(await apply({ a: { type: { type: 'direct', container: READINGS } } }), 400)).toContain('type.container');
  });

  it('holds up to 1000 properties, where other containers hold 100', async () => {
    const properties = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: { type: 'int32' } }]));
    await ok(h, '/models/containers', { items: [{ space: SPACE, externalId: 'Wide', usedFor: 'record', properties: properties(1000) }] });
    const tooWide = await h.post('/models/containers', { items: [{ space: SPACE, externalId: 'Wider', usedFor: 'record', properties: properties(1001) }] });
    expect(errorMessage(tooWide, 400)).toBe('items[0].properties: a container has at most 1000 properties, got 1001');
    const node = await h.post('/models/containers', { items: [{ space: SPACE, externalId: 'WideNode', properties: properties(101) }] });
    expect(errorMessage(node, 400)).toBe('items[0].properties: a container has at most 100 properties, got 101');
    await ok(h, '/streams/live/records', { items: [{ space: SPACE, externalId: 'wide', sources: [{ source: { type: 'container', space: SPACE, externalId: 'Wide' }, properties: { p999: 9 } }] }] }, 202);
  });

  it('cannot be mapped by a view', async () => {
    const res = await h.post('/models/views', {
      items: [{ space: SPACE, externalId: 'ReadingView', version: '1', properties: { tag: { container: READINGS, containerPropertyIdentifier: 'tag' } } }],
    });
    expect(errorMessage(res, 400)).toContain('the view maps record containers (rs:Reading)');
  });
});

describe('access', () => {
  it('writes records only in the spaces of streamRecordsAcl:WRITE (403 otherwise), with containers read under dataModelsAcl', async () => {
    const token = await namedClientToken(h, 'space-writer', [
      capability('streamRecordsAcl', ['READ', 'WRITE'], { spaceIdScope: { spaceIds: [`${SPACE}2`] } }),
      capability('dataModelsAcl', ['READ']),
    ]);
    const as = (path: string, body: unknown) => h.request('POST', path, body, bearer(token));
    expect((await as('/streams/live/records', { items: [reading('scoped', {}, undefined, `${SPACE}2`)] })).status).toBe(202);
    const outside = await as('/streams/live/records', { items: [reading('scoped', {}, undefined, SPACE)] });
    expect(errorMessage(outside, 403)).toContain('items[0].space: streamRecordsAcl:WRITE is granted only in');
    expect(errorMessage(await as('/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'i1' }] }), 403)).toContain('items[0].space');
  });

  it('reads records only in the spaces of streamRecordsAcl:READ, as if there were no others', async () => {
    await ok(h, '/streams/live/records', { items: [reading('seen', { value: 1 }, undefined, `${SPACE}2`), reading('unseen', { value: 2 })] }, 202);
    const token = await namedClientToken(h, 'space-reader', [
      capability('streamRecordsAcl', ['READ'], { spaceIdScope: { spaceIds: [`${SPACE}2`] } }),
      capability('dataModelsAcl', ['READ']),
    ]);
    const as = async (path: string, body: unknown) => {
      const res = await h.request('POST', path, body, bearer(token));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const spaces = (items: Array<{ space: string }>) => [...new Set(items.map((i) => i.space))];
    expect(spaces((await as('/streams/live/records/filter', { limit: 1000 })).items)).toEqual([`${SPACE}2`]);
    expect(spaces((await as('/streams/live/records/sync', { initializeCursor: '1d-ago', limit: 1000 })).items)).toEqual([`${SPACE}2`]);
    const counted = await as('/streams/live/records/aggregate', { aggregates: { n: { count: {} }, s: { uniqueValues: { property: ['space'] } } } });
    expect(counted.aggregates.s).toEqual({ uniqueValueBuckets: [{ value: `${SPACE}2`, count: counted.aggregates.n.count }] });
  });

  it('answers containers outside the spaces of dataModelsAcl as containers that do not exist', async () => {
    const token = await namedClientToken(h, 'other-schema', [capability('streamRecordsAcl', ['READ', 'WRITE']), capability('dataModelsAcl', ['READ'], { spaceIdScope: { spaceIds: [`${SPACE}2`] } })]);
    const res = await h.request('POST', '/streams/live/records', { items: [reading('hidden', {})] }, bearer(token));
    expect(errorMessage(res, 400)).toBe('One or more containers do not exist: rs:Reading');
    const read = await h.request('POST', '/streams/live/records/filter', { sources: ALL_READINGS }, bearer(token));
    expect(errorMessage(read, 400)).toBe('sources[0].source: one or more containers do not exist: rs:Reading');
  });

  it('needs dataModelsAcl:READ besides streamRecordsAcl to write and read records', async () => {
    const token = await namedClientToken(h, 'no-schema', [capability('streamRecordsAcl', ['READ', 'WRITE'])]);
    const res = await h.request('POST', '/streams/live/records', { items: [reading('x', {})] }, bearer(token));
    expect(errorMessage(res, 403)).toContain('Missing capability dataModelsAcl:READ');
    expect((await h.request('POST', '/streams/live/records/delete', { items: [{ space: SPACE, externalId: 'nothing' }] }, bearer(token))).status).toBe(200);
  });
});
