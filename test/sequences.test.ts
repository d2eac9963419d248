/**
 * Sequences over HTTP, on both backends: their columns (defaults, numbering, the limits, counting removed
 * columns, and `update.columns` add/remove/modify), the list, filter, partition, search and aggregate
 * operations they share with the other resources, delete with `ignoreUnknownIds`, and access scoped by data
 * set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let dsA: number;
let dsB: number;
let pump: number;
let site: number;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('seq-a', 'seq-read-all') });
  [dsA, dsB] = (await h.post('/datasets', { items: [{ externalId: 'seq-ds-a' }, { externalId: 'seq-ds-b' }] })).body.items.map((d: { id: number }) => d.id);
  const assets = (await h.post('/assets', { items: [{ externalId: 'seq-site', name: 'Site' }, { externalId: 'seq-pump', name: 'Pump', parentExternalId: 'seq-site' }] })).body.items;
  site = assets.find((a: { externalId: string }) => a.externalId === 'seq-site').id;
  pump = assets.find((a: { externalId: string }) => a.externalId === 'seq-pump').id;
});
afterAll(() => h.close());

const col = (externalId: string, valueType?: string, extra: Record<string, unknown> = {}) => ({ externalId, ...(valueType ? { valueType } : {}), ...extra });

async function create(...items: Array<Record<string, unknown>>) {
  const res = await h.post('/sequences', { items });
  if (res.status !== 201) throw new Error(`create: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items as Array<Record<string, any>>;
}

const update = (item: Record<string, unknown>) => h.post('/sequences/update', { items: [item] });
const xids = (res: Response) => (res.body.items as Array<{ externalId: string }>).map((s) => s.externalId).sort();

describe('creating sequences', () => {
  it('gives every column an id, its number in the sequence, a type (DOUBLE unless given, in any case) and {} metadata', async () => {
    const [s] = await create({
      externalId: 'create-1',
      name: 'Well log',
      description: 'depth log',
      metadata: { unit: 'm' },
      columns: [col('depth', 'double', { name: 'Depth', description: 'metres', metadata: { source: 'tool' } }), col('count', 'Long'), col('label', 'STRING'), col('plain')],
    });
    expect(s).toEqual({
      id: expect.any(Number),
      externalId: 'create-1',
      name: 'Well log',
      description: 'depth log',
      metadata: { unit: 'm' },
      columns: [
        { id: 1, externalId: 'depth', name: 'Depth', description: 'metres', valueType: 'DOUBLE', metadata: { source: 'tool' }, createdTime: s.createdTime, lastUpdatedTime: s.createdTime },
        { id: 2, externalId: 'count', valueType: 'LONG', metadata: {}, createdTime: s.createdTime, lastUpdatedTime: s.createdTime },
        { id: 3, externalId: 'label', valueType: 'STRING', metadata: {}, createdTime: s.createdTime, lastUpdatedTime: s.createdTime },
        { id: 4, externalId: 'plain', valueType: 'DOUBLE', metadata: {}, createdTime: s.createdTime, lastUpdatedTime: s.createdTime },
      ],
      createdTime: expect.any(Number),
      lastUpdatedTime: s.createdTime,
    });
    const byIds = await h.post('/sequences/byids', { items: [{ externalId: 'create-1' }, { id: s.id }] });
    expect(byIds.body.items).toEqual([s, s]);
    expect((await h.get('/sequences?limit=1000')).body.items).toContainEqual(s);
  });

  it('refuses an external id in use (409), an unknown value type and a column named twice, creating nothing', async () => {
    const taken = await h.post('/sequences', { items: [{ externalId: 'create-2', columns: [col('a')] }, { externalId: 'create-1', columns: [col('a')] }] });
    expect(errorMessage(taken, 409)).toBeTruthy();
    expect(taken.body.error.duplicated).toEqual([{ externalId: 'create-1' }]);
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'create-2', columns: [col('a', 'INT')] }] }), 400)).toBe(
      'items[0].columns[0].valueType: expected one of STRING, DOUBLE, LONG, got "INT"',
    );
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'create-2', columns: [col('a'), col('b'), col('a')] }] }), 400)).toBe(
      'items[0].columns[2].externalId: more than one column has the external id "a"',
    );
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'create-2' }] }), 400)).toMatch(/columns/);
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'create-2', columns: [] }] }), 400)).toMatch(/columns/);
    expect((await h.post('/sequences/byids', { items: [{ externalId: 'create-2' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('holds the column limits: 400 in all, 400 numeric, 200 STRING, naming the limit', async () => {
    const many = (n: number, type: string, prefix = type) => Array.from({ length: n }, (_, i) => col(`${prefix}${i}`, type));
    expect((await create({ externalId: 'limits-ok', columns: [...many(200, 'STRING'), ...many(200, 'LONG')] }))[0].columns).toHaveLength(400);
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'limits-1', columns: many(201, 'STRING') }] }), 400)).toBe(
      'items[0].columns: a sequence has at most 200 STRING columns; this one would have 201',
    );
    expect(errorMessage(await h.post('/sequences', { items: [{ externalId: 'limits-2', columns: many(401, 'DOUBLE') }] }), 400)).toMatch(/items\[0\]\.columns: .*400/);
    expect(errorMessage(await update({ externalId: 'limits-ok', update: { columns: { add: [col('one-more')] } } }), 400)).toBe(
      'items[0].update.columns: a sequence has at most 400 columns; this one would have 401',
    );
  });
});

describe('updating sequences', () => {
  it('changes the sequence fields, metadata and asset and data set links', async () => {
    const [s] = await create({ externalId: 'upd-1', name: 'n', metadata: { a: 'b' }, columns: [col('x')] });
    const res = await update({ id: s.id, update: { name: { setNull: true }, description: { set: 'd' }, metadata: { set: {} }, assetId: { set: pump }, dataSetId: { set: dsA }, externalId: { set: 'upd-1b' } } });
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toEqual({ ...s, externalId: 'upd-1b', description: 'd', name: undefined, metadata: {}, assetId: pump, dataSetId: dsA, lastUpdatedTime: expect.any(Number) });
    expect(res.body.items[0]).not.toHaveProperty('name');
  });

  it('adds, removes and modifies columns; columns it does not touch keep their times', async () => {
    const [s] = await create({ externalId: 'upd-cols', columns: [col('user', 'STRING', { description: 'who' }), col('amount'), col('age', 'LONG')] });
    const [user, amount, age] = s.columns;
    let res = await update({ externalId: 'upd-cols', update: { columns: { remove: [{ externalId: 'user' }] } } });
    expect(res.body.items[0].columns).toEqual([amount, age]);
    res = await update({
      externalId: 'upd-cols',
      update: {
        columns: {
          modify: [
            { externalId: 'amount', update: { externalId: { set: 'total' }, description: { set: 'in NOK' }, metadata: { add: { unit: 'NOK' } } } },
            { externalId: 'age', update: { name: { set: 'Age' } } },
          ],
          // The official Python SDK removes columns by bare external id when it replaces a sequence's columns.
          remove: ['total'],
          add: [col('user', 'STRING'), col('weight', 'DOUBLE')],
        },
      },
    });
    expect(res.status).toBe(200);
    const columns = res.body.items[0].columns;
    expect(columns.map((c: { externalId: string; id: number }) => [c.externalId, c.id])).toEqual([
      ['age', 3],
      ['user', 4],
      ['weight', 5],
    ]);
    expect(columns[0]).toEqual({ ...age, name: 'Age', lastUpdatedTime: expect.any(Number) });
    expect(columns[1]).not.toEqual(user);
    // An empty columns change changes no column.
    res = await update({ externalId: 'upd-cols', update: { columns: {} } });
    expect(res.body.items[0].columns).toEqual(columns);
  });

  it('refuses column changes naming a column the sequence lacks, or taking an external id in use, and changes nothing', async () => {
    const [s] = await create({ externalId: 'upd-bad', columns: [col('a'), col('b')] });
    const bad = async (columns: unknown, message: string) => {
      expect(errorMessage(await update({ externalId: 'upd-bad', update: { name: { set: 'changed' }, columns } }), 400)).toBe(message);
    };
    await bad({ remove: [{ externalId: 'zz' }] }, 'items[0].update.columns.remove[0]: the sequence has no column "zz"');
    await bad({ modify: [{ externalId: 'zz', update: { name: { set: 'x' } } }] }, 'items[0].update.columns.modify[0].externalId: the sequence has no column "zz"');
    await bad({ modify: [{ externalId: 'a', update: { externalId: { set: 'b' } } }] }, 'items[0].update.columns.modify[0].update.externalId.set: the sequence already has a column "b"');
    await bad({ add: [col('b')] }, 'items[0].update.columns.add[0].externalId: the sequence already has a column "b"');
    await bad({ add: [col('c', 'TEXT')] }, 'items[0].update.columns.add[0].valueType: expected one of STRING, DOUBLE, LONG, got "TEXT"');
    await bad({ remove: ['a', 'b'] }, 'items[0].update.columns: a sequence keeps at least one column');
    expect((await h.post('/sequences/byids', { items: [{ externalId: 'upd-bad' }] })).body.items[0]).toEqual(s);
  });

  it('counts removed columns towards the limits, as the reference does', async () => {
    const strings = Array.from({ length: 200 }, (_, i) => col(`s${i}`, 'STRING'));
    await create({ externalId: 'upd-removed', columns: strings });
    expect((await update({ externalId: 'upd-removed', update: { columns: { remove: ['s0', 's1'] } } })).status).toBe(200);
    expect(errorMessage(await update({ externalId: 'upd-removed', update: { columns: { add: [col('again', 'STRING')] } } }), 400)).toBe(
      'items[0].update.columns: a sequence has at most 200 STRING columns; this one would have 199, and the 2 columns removed from it count towards the limit',
    );
    const numeric = await update({ externalId: 'upd-removed', update: { columns: { add: [col('n', 'DOUBLE')] } } });
    expect(numeric.body.items[0].columns.at(-1)).toMatchObject({ externalId: 'n', id: 201 });
  });
});

describe('listing, searching and aggregating sequences', () => {
  beforeAll(async () => {
    await create(
      { externalId: 'q-pump-1', name: 'pump curve', description: 'efficiency by flow', assetId: pump, dataSetId: dsA, metadata: { Kind: 'Curve' }, columns: [col('flow')] },
      { externalId: 'q-pump-2', name: 'pump log', description: 'vibration', assetId: pump, dataSetId: dsB, metadata: { kind: 'log' }, columns: [col('t')] },
      { externalId: 'q-site-1', name: 'site table', description: 'levels', assetId: site, metadata: { kind: 'curve', zone: 'north' }, columns: [col('level')] },
      { externalId: 'q-none', name: 'loose', columns: [col('v')] },
    );
  });
  const list = (body: unknown) => h.post('/sequences/list', { limit: 1000, ...(body as object) });
  const q = (res: Response) => xids(res).filter((x) => x.startsWith('q-'));

  it('filters by name, external id prefix, metadata (keys and values without case), assets, subtrees, roots and data sets', async () => {
    expect(q(await list({ filter: { name: 'pump log' } }))).toEqual(['q-pump-2']);
    expect(q(await list({ filter: { externalIdPrefix: 'q-pump' } }))).toEqual(['q-pump-1', 'q-pump-2']);
    expect(q(await list({ filter: { metadata: { KIND: 'curve' } } }))).toEqual(['q-pump-1', 'q-site-1']);
    expect(q(await list({ filter: { assetIds: [pump] } }))).toEqual(['q-pump-1', 'q-pump-2']);
    expect(q(await list({ filter: { assetSubtreeIds: [{ externalId: 'seq-site' }] } }))).toEqual(['q-pump-1', 'q-pump-2', 'q-site-1']);
    expect(q(await list({ filter: { rootAssetIds: [site] } }))).toEqual(['q-pump-1', 'q-pump-2', 'q-site-1']);
    expect(q(await list({ filter: { dataSetIds: [{ id: dsA }, { externalId: 'seq-ds-b' }] } }))).toEqual(['q-pump-1', 'q-pump-2']);
    expect(q(await list({ filter: { createdTime: { min: 0 }, externalIdPrefix: 'q-' } }))).toEqual(['q-none', 'q-pump-1', 'q-pump-2', 'q-site-1']);
    const unknownAsset = await list({ filter: { assetSubtreeIds: [{ externalId: 'no-such-asset' }] } });
    expect(errorMessage(unknownAsset, 400)).toBeTruthy();
    expect(unknownAsset.body.error.missing).toEqual([{ externalId: 'no-such-asset' }]);
  });

  it('takes the advanced filter and sorting on the reference’s properties', async () => {
    const res = await list({
      advancedFilter: { and: [{ prefix: { property: ['externalId'], value: 'q-' } }, { or: [{ equals: { property: ['assetId'], value: pump } }, { search: { property: ['description'], value: 'levels' } }] }] },
      sort: [{ property: ['name'], order: 'desc' }],
    });
    expect(res.body.items.map((s: { externalId: string }) => s.externalId)).toEqual(['q-site-1', 'q-pump-2', 'q-pump-1']);
    expect(q(await list({ advancedFilter: { in: { property: ['metadata', 'zone'], values: ['NORTH'] } } }))).toEqual(['q-site-1']);
    expect(errorMessage(await list({ advancedFilter: { equals: { property: ['columns'], value: 'x' } } }), 400)).toMatch(/columns/);
  });

  it('splits a listing into disjoint partitions that together are the whole, each following its own cursor', async () => {
    const whole = xids(await h.post('/sequences/list', { limit: 1000 }));
    const parts: string[] = [];
    for (let m = 1; m <= 3; m++) {
      let cursor: string | undefined;
      do {
        const page = await h.post('/sequences/list', { partition: `${m}/3`, limit: 2, ...(cursor ? { cursor } : {}) });
        parts.push(...page.body.items.map((s: { externalId: string }) => s.externalId));
        cursor = page.body.nextCursor;
      } while (cursor);
    }
    expect(parts.sort()).toEqual(whole);
    expect(new Set(parts).size).toBe(parts.length);
    const get = await h.get('/sequences?partition=1/1&limit=1000');
    expect(xids(get)).toEqual(whole);
  });

  it('searches name and description, and aggregates', async () => {
    const search = await h.post('/sequences/search', { search: { query: 'pump vibration' }, filter: { externalIdPrefix: 'q-' } });
    expect(search.body.items[0].externalId).toBe('q-pump-2');
    expect(xids(await h.post('/sequences/search', { search: { name: 'table', description: null, query: null } }))).toEqual(['q-site-1']);
    expect((await h.post('/sequences/aggregate', { filter: { externalIdPrefix: 'q-pump' } })).body).toEqual({ items: [{ count: 2 }] });
    const assets = await h.post('/sequences/aggregate', { aggregate: 'uniqueValues', properties: [{ property: ['assetId'] }], advancedFilter: { prefix: { property: ['externalId'], value: 'q-' } } });
    expect(assets.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ count: 2, values: [pump] }), expect.objectContaining({ count: 1, values: [site] })]));
    const keys = await h.post('/sequences/aggregate', { aggregate: 'uniqueProperties', path: ['metadata'], filter: { externalIdPrefix: 'q-' } });
    expect(keys.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ count: 3, values: [{ property: ['metadata', 'kind'] }] }),
        expect.objectContaining({ count: 1, values: [{ property: ['metadata', 'zone'] }] }),
      ]),
    );
  });
});

describe('deleting sequences', () => {
  it('refuses unknown ids with `missing` and deletes nothing; with ignoreUnknownIds deletes those that exist', async () => {
    await create({ externalId: 'del-1', columns: [col('a')] }, { externalId: 'del-2', columns: [col('a')] });
    const refused = await h.post('/sequences/delete', { items: [{ externalId: 'del-1' }, { externalId: 'del-none' }, { id: 1 }] });
    expect(errorMessage(refused, 400)).toBeTruthy();
    expect(refused.body.error.missing).toEqual([{ externalId: 'del-none' }, { id: 1 }]);
    expect((await h.post('/sequences/byids', { items: [{ externalId: 'del-1' }] })).status).toBe(200);
    expect((await h.post('/sequences/delete', { items: [{ externalId: 'del-1' }, { externalId: 'del-none' }], ignoreUnknownIds: true })).body).toEqual({});
    expect((await h.post('/sequences/byids', { items: [{ externalId: 'del-1' }, { externalId: 'del-2' }], ignoreUnknownIds: true })).body.items.map((s: { externalId: string }) => s.externalId)).toEqual(['del-2']);
  });

  it('deletes the rows with the sequence: a new sequence of the same external id starts empty', async () => {
    await create({ externalId: 'del-rows', columns: [col('a')] });
    await h.post('/sequences/data', { items: [{ externalId: 'del-rows', columns: ['a'], rows: [{ rowNumber: 1, values: [1] }] }] });
    await h.post('/sequences/delete', { items: [{ externalId: 'del-rows' }] });
    await create({ externalId: 'del-rows', columns: [col('a')] });
    expect((await h.post('/sequences/data/list', { externalId: 'del-rows' })).body.rows).toEqual([]);
  });
});

describe('access scoped by data set (sequencesAcl)', () => {
  let a: string;
  let readAll: string;
  beforeAll(async () => {
    await create(
      { externalId: 'acl-a', dataSetId: dsA, columns: [col('v')] },
      { externalId: 'acl-b', dataSetId: dsB, columns: [col('v')] },
    );
    await h.post('/sequences/data', { items: ['acl-a', 'acl-b'].map((externalId) => ({ externalId, columns: ['v'], rows: [{ rowNumber: 0, values: [1] }] })) });
    a = await namedClientToken(h, 'seq-a', [capability('sequencesAcl', ['READ', 'WRITE'], { datasetScope: { ids: [dsA] } })]);
    readAll = await namedClientToken(h, 'seq-read-all', [capability('sequencesAcl', ['READ']), capability('sequencesAcl', ['WRITE'], { datasetScope: { ids: [dsA] } })]);
  });
  const as = (token: string, path: string, body: unknown) => h.request('POST', path, body, bearer(token));

  it('sees only the sequences in scope, and their rows; others are unknown, as absent ones are', async () => {
    expect(xids(await as(a, '/sequences/list', { limit: 1000, filter: { externalIdPrefix: 'acl-' } }))).toEqual(['acl-a']);
    expect((await as(a, '/sequences/aggregate', { filter: { externalIdPrefix: 'acl-' } })).body.items).toEqual([{ count: 1 }]);
    const hidden = await as(a, '/sequences/data/list', { externalId: 'acl-b' });
    const absent = await as(a, '/sequences/data/list', { externalId: 'acl-none' });
    expect(errorMessage(hidden, 400)).toBe(errorMessage(absent, 400).replace('acl-none', 'acl-b'));
    expect(hidden.body.error.missing).toEqual([{ externalId: 'acl-b' }]);
    expect((await as(a, '/sequences/data/latest', { externalId: 'acl-a' })).body.rows).toEqual([{ rowNumber: 0, values: [1] }]);
    expect((await as(a, '/sequences/data', { items: [{ externalId: 'acl-b', columns: ['v'], rows: [{ rowNumber: 1, values: [2] }] }] })).status).toBe(400);
  });

  it('refuses writes to sequences it sees but may not write (403), and moving a sequence out of its scope', async () => {
    const insert = await as(readAll, '/sequences/data', { items: [{ externalId: 'acl-b', columns: ['v'], rows: [{ rowNumber: 1, values: [2] }] }] });
    expect(errorMessage(insert, 403)).toMatch(/sequence/);
    expect(errorMessage(await as(readAll, '/sequences/data/delete', { items: [{ externalId: 'acl-b', rows: [0] }] }), 403)).toMatch(/sequence/);
    expect(errorMessage(await as(a, '/sequences/update', { items: [{ externalId: 'acl-a', update: { dataSetId: { set: dsB } } }] }), 403)).toMatch(/sequence/);
    expect((await as(readAll, '/sequences/data', { items: [{ externalId: 'acl-a', columns: ['v'], rows: [{ rowNumber: 1, values: [2] }] }] })).status).toBe(200);
    expect((await h.post('/sequences/data/list', { externalId: 'acl-b' })).body.rows).toEqual([{ rowNumber: 0, values: [1] }]);
  });
});
