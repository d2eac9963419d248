import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ bodyLimit: 64 * 1024 });
  await h.post('/events', { items: [{ externalId: 'v-1', type: 'a', startTime: 1 }, { externalId: 'v-2', type: 'b', startTime: 2 }] });
});
afterAll(() => h.close());

const list = (body: unknown) => h.post('/events/list', body);
const leaf = (l: object) => ({ advancedFilter: l });

describe('request bodies', () => {
  it('refuses malformed JSON, a wrong content type, an empty body and an oversized body', async () => {
    expect(errorMessage(await h.request('POST', '/events/list', '{"limit":', { 'content-type': 'application/json' }), 400)).toBe('The request body is not valid JSON: Unexpected end of JSON input');
    expect(errorMessage(await h.request('POST', '/events/list', 'limit=1', { 'content-type': 'text/plain' }), 415)).toMatch(/Content-Type/);
    expect(errorMessage(await h.request('POST', '/events/list', '', { 'content-type': 'application/json' }), 400)).toMatch(/empty/);
    const big = { items: [{ description: 'x'.repeat(400), metadata: { k: 'v'.repeat(70 * 1024) } }] };
    expect(errorMessage(await h.post('/events', big), 413)).toMatch(/larger than the limit of 65536 bytes/);
  });

  it('refuses what no store can keep as text (invalid UTF-8, unpaired surrogate escapes, NUL) and creates nothing', async () => {
    const json = { 'content-type': 'application/json' };
    const before = (await h.post('/events/aggregate', { aggregate: 'count' })).body.items[0].count;
    const lone = await h.request('POST', '/events', '{"items":[{"externalId":"ok-1"},{"externalId":"a\\ud800"}]}', json);
    expect(errorMessage(lone, 400)).toMatch(/^items\[1\]\.externalId: contains an unpaired UTF-16 surrogate/);
    const key = await h.request('POST', '/events', '{"items":[{"metadata":{"k\\udc00":"v"}}]}', json);
    expect(errorMessage(key, 400)).toMatch(/^items\[0\]\.metadata: a key contains an unpaired UTF-16 surrogate/);
    const nul = await h.request('POST', '/events', '{"items":[{"externalId":"ok-2","description":"a\\u0000b"}]}', json);
    expect(errorMessage(nul, 400)).toBe('items[0].description: contains the character U+0000 (NUL, "\\u0000"), which a text value cannot hold');
    const nulKey = await h.request('POST', '/events', '{"items":[{"metadata":{"\\u0000":"v"}}]}', json);
    expect(errorMessage(nulKey, 400)).toMatch(/^items\[0\]\.metadata: a key contains the character U\+0000/);
    const bytes = Buffer.concat([Buffer.from('{"items":[{"externalId":"'), Buffer.from([0xff]), Buffer.from('"}]}')]);
    expect(errorMessage(await h.request('POST', '/events', bytes, json), 400)).toBe('The request body is not valid UTF-8');
    const proto = await h.request('POST', '/events', '{"items":[{"__proto__":{"x":1}}]}', json);
    expect(errorMessage(proto, 400)).toMatch(/"__proto__"/);
    expect((await h.post('/events/aggregate', { aggregate: 'count' })).body.items[0].count).toBe(before);
    // A surrogate pair written as escapes is a character like any other, and is found again by its value.
    const pair = await h.request('POST', '/events', '{"items":[{"externalId":"pump \\ud83d\\ude00 \\u00b0C"}]}', json);
    expect(pair.status).toBe(201);
    expect(pair.body.items[0].externalId).toBe('pump \u{1F600} °C');
    expect((await h.post('/events/byids', { items: [{ externalId: 'pump \u{1F600} °C' }] })).body.items[0].id).toBe(pair.body.items[0].id);
  });

  it('refuses unknown properties and nulls, naming them', async () => {
    expect(errorMessage(await list({ limits: 5 }), 400)).toMatch(/unknown property "limits"/);
    expect(errorMessage(await list({ filter: { colour: 'x' } }), 400)).toMatch(/filter: unknown property "colour"/);
    expect(errorMessage(await list({ limit: null }), 400)).toMatch(/limit: null is not allowed/);
    expect(errorMessage(await list({ filter: { startTime: { min: null } } }), 400)).toMatch(/filter\.startTime\.min: null is not allowed/);
    expect(errorMessage(await h.post('/events/search', { filter: { type: null } }), 400)).toMatch(/filter\.type: null is not allowed/);
  });

  it('refuses limit 0 and limits above 1000', async () => {
    expect(errorMessage(await list({ limit: 0 }), 400)).toMatch(/limit: must be >= 1/);
    expect(errorMessage(await list({ limit: 1001 }), 400)).toMatch(/limit: must be <= 1000/);
    expect(errorMessage(await h.get('/events?limit=0'), 400)).toMatch(/query parameter "limit"/);
    expect(errorMessage(await h.get('/events?limit=abc'), 400)).toMatch(/query parameter "limit"/);
    expect((await list({ limit: 1000 })).status).toBe(200);
  });

  it('refuses bad partitions', async () => {
    for (const p of ['0/3', '4/3', '1/11', 'a/b', '1/0', '1', '', '01/3', '1/3/4']) {
      expect(errorMessage(await list({ partition: p }), 400), p).toMatch(/partition/);
    }
    expect(errorMessage(await list({ partition: '1/11' }), 400)).toMatch(/at most 10 partitions/);
    expect(errorMessage(await h.get('/events?partition=4/3'), 400)).toMatch(/partition/);
    expect((await list({ partition: '10/10' })).status).toBe(200);
  });

  it('refuses a cursor from another query or a forged one', async () => {
    const first = await list({ limit: 1, filter: { type: 'a' } });
    const cursor = first.body.nextCursor ?? (await list({ limit: 1 })).body.nextCursor;
    const page = await list({ limit: 1 });
    expect(page.body.nextCursor).toBeTruthy();
    expect(errorMessage(await list({ limit: 1, cursor: page.body.nextCursor, filter: { type: 'b' } }), 400)).toMatch(/cursor.*does not belong/);
    expect(errorMessage(await list({ limit: 1, cursor: page.body.nextCursor, sort: [{ property: ['startTime'] }] }), 400)).toMatch(/cursor/);
    expect(errorMessage(await list({ limit: 1, cursor: page.body.nextCursor, partition: '1/2' }), 400)).toMatch(/cursor/);
    expect(errorMessage(await list({ cursor: 'garbage' }), 400)).toMatch(/cursor/);
    const [payload, mac] = String(cursor).split('.');
    const forged = Buffer.from(JSON.stringify({ s: 0, v: [0, 0] })).toString('base64url');
    expect(errorMessage(await list({ limit: 1, cursor: `${forged}.${mac}` }), 400)).toMatch(/cursor/);
    expect(payload).toBeTruthy();
    // Changing only the page size keeps the cursor valid.
    expect((await list({ limit: 5, cursor: page.body.nextCursor })).status).toBe(200);
  });

  it('refuses sort on unknown properties and more than two sort properties', async () => {
    expect(errorMessage(await list({ sort: [{ property: ['colour'] }] }), 400)).toMatch(/sort\[0\]\.property: cannot sort events on \["colour"\]/);
    expect(errorMessage(await list({ sort: [{ property: ['assetIds'] }] }), 400)).toMatch(/cannot sort/);
    expect(errorMessage(await list({ sort: [{ property: ['type'], order: 'up' }] }), 400)).toBe('sort[0].order: must be one of "asc", "desc", got "up"');
    expect(errorMessage(await list({ sort: [{ property: ['type'], nulls: 'middle' }] }), 400)).toBe(
      'sort[0].nulls: must be one of "auto", "first", "last", got "middle"',
    );
    const three = [{ property: ['type'] }, { property: ['source'] }, { property: ['startTime'] }];
    expect(errorMessage(await list({ sort: three }), 400)).toMatch(/sort: must have at most 2 items/);
    expect(errorMessage(await list({ sort: [{ property: ['type'] }, { property: ['type'] }] }), 400)).toMatch(/twice/);
  });
});

describe('advancedFilter rules, each broken on its own', () => {
  const eq = (property: string[], value: unknown) => ({ equals: { property, value } });

  it('needs at least one element in and/or', async () => {
    expect(errorMessage(await list(leaf({ and: [] })), 400)).toMatch(/advancedFilter\.and: must contain at least 1 filter/);
    expect(errorMessage(await list(leaf({ or: [] })), 400)).toMatch(/advancedFilter\.or: must contain at least 1 filter/);
  });

  it('limits depth to 10', async () => {
    const nest = (depth: number): object => (depth === 1 ? eq(['type'], 'a') : { not: nest(depth - 1) });
    expect((await list(leaf(nest(10)))).status).toBe(200);
    expect(errorMessage(await list(leaf(nest(11))), 400)).toMatch(/deeper than 10/);
  });

  it('limits clauses to 100, counting and/or/not as well as leaves', async () => {
    const leaves = (n: number) => Array.from({ length: n }, (_, i) => eq(['type'], `t${i}`));
    expect((await list(leaf({ or: leaves(99) }))).status).toBe(200);
    expect(errorMessage(await list(leaf({ or: leaves(100) })), 400)).toMatch(/101 clauses; at most 100/);
    expect(errorMessage(await list(leaf({ not: { or: leaves(99) } })), 400)).toMatch(/101 clauses; at most 100/);
  });

  it('checks property arrays', async () => {
    expect(errorMessage(await list(leaf(eq([], 'a'))), 400)).toMatch(/property: must have 1 or 2 elements/);
    expect(errorMessage(await list(leaf(eq(['metadata', 'a', 'b'], 'a'))), 400)).toMatch(/property: must have 1 or 2 elements/);
    expect(errorMessage(await list(leaf(eq(['  '], 'a'))), 400)).toMatch(/property\[0\]: must not be blank/);
    expect(errorMessage(await list(leaf(eq(['metadata', 'k'.repeat(129)], 'a'))), 400)).toMatch(/property\[1\]: must be at most 128/);
    expect((await list(leaf(eq(['metadata', 'k'.repeat(128)], 'a')))).status).toBe(200);
    expect(errorMessage(await list(leaf(eq(['colour'], 'a'))), 400)).toMatch(/unknown property \["colour"\]/);
    expect(errorMessage(await list(leaf(eq(['type', 'x'], 'a'))), 400)).toMatch(/unknown property/);
  });

  it('checks value counts of in, containsAny and containsAll', async () => {
    for (const op of ['in', 'containsAny', 'containsAll']) {
      const property = op === 'in' ? ['type'] : ['assetIds'];
      const value = op === 'in' ? 'a' : 1;
      expect(errorMessage(await list(leaf({ [op]: { property, values: [] } })), 400)).toMatch(/values: must have between 1 and 100/);
      expect(errorMessage(await list(leaf({ [op]: { property, values: Array(101).fill(value) } })), 400)).toMatch(/between 1 and 100/);
      expect((await list(leaf({ [op]: { property, values: Array(100).fill(value) } }))).status).toBe(200);
      expect(errorMessage(await list(leaf({ [op]: { property, values: [{ a: 1 }] } })), 400)).toMatch(/values\[0\]: expected a/);
    }
  });

  it('matches leaves to property kinds', async () => {
    expect(errorMessage(await list(leaf({ containsAny: { property: ['type'], values: ['a'] } })), 400)).toMatch(/only to array properties/);
    expect(errorMessage(await list(leaf(eq(['assetIds'], 1))), 400)).toMatch(/array property/);
    expect(errorMessage(await list(leaf({ prefix: { property: ['startTime'], value: '1' } })), 400)).toMatch(/prefix applies only to string/);
    expect(errorMessage(await list(leaf({ search: { property: ['type'], value: 'a' } })), 400)).toMatch(/search applies only to \["description"\]/);
    expect(errorMessage(await list(leaf(eq(['startTime'], 'a'))), 400)).toMatch(/expected a number/);
    expect(errorMessage(await list(leaf(eq(['type'], 5))), 400)).toMatch(/expected a string/);
    expect(errorMessage(await list(leaf(eq(['type'], true))), 400)).toMatch(/expected a string/);
    expect(errorMessage(await list(leaf({ equals: { property: ['type'] } })), 400)).toMatch(/missing required property "value"/);
    expect(errorMessage(await list(leaf({ equals: { property: ['type'], value: 'a', extra: 1 } })), 400)).toMatch(/unknown property "extra"/);
    expect(errorMessage(await list(leaf({ match: { property: ['type'] } })), 400)).toMatch(/unknown filter "match"/);
    expect(errorMessage(await list(leaf({ and: [eq(['type'], 'a')], or: [eq(['type'], 'a')] })), 400)).toMatch(/exactly one/);
  });

  it('checks range bounds', async () => {
    expect(errorMessage(await list(leaf({ range: { property: ['startTime'] } })), 400)).toMatch(/needs at least one of gt, gte, lt, lte/);
    expect(errorMessage(await list(leaf({ range: { property: ['startTime'], gt: 1, gte: 1 } })), 400)).toMatch(/gt and gte cannot be combined/);
    expect(errorMessage(await list(leaf({ range: { property: ['startTime'], lt: 1, lte: 1 } })), 400)).toMatch(/lt and lte cannot be combined/);
    expect(errorMessage(await list(leaf({ range: { property: ['startTime'], gt: [1] } })), 400)).toMatch(/gt: expected a number/);
    expect(errorMessage(await list(leaf({ range: { property: ['metadata', 'k'], gt: 'a' } })), 400)).toMatch(/on metadata needs both a lower bound/);
    expect(errorMessage(await list(leaf({ range: { property: ['metadata', 'k'], lte: 'a' } })), 400)).toMatch(/needs both/);
    expect((await list(leaf({ range: { property: ['metadata', 'k'], gte: 'a', lt: 'b' } }))).status).toBe(200);
    expect((await list(leaf({ range: { property: ['startTime'], gt: 1 } }))).status).toBe(200);
  });

  it('checks search values and the number of search leaves', async () => {
    const search = (value: string) => ({ search: { property: ['description'], value } });
    expect(errorMessage(await list(leaf(search('   '))), 400)).toMatch(/value: must not be blank/);
    expect(errorMessage(await list(leaf(search('x'.repeat(129)))), 400)).toMatch(/at most 128 characters/);
    expect((await list(leaf(search('x'.repeat(128))))).status).toBe(200);
    expect((await list(leaf({ and: [search('a'), search('b')] }))).status).toBe(200);
    expect(errorMessage(await list(leaf({ and: [search('a'), search('b'), search('c')] })), 400)).toMatch(/3 search filters; at most 2/);
  });

  it('limits leaf string values per property', async () => {
    const limits: Array<[string[], number]> = [
      [['externalId'], 255],
      [['description'], 255],
      [['type'], 64],
      [['subtype'], 64],
      [['source'], 128],
      [['metadata', 'anykey'], 128],
    ];
    for (const [property, max] of limits) {
      expect((await list(leaf(eq(property, 'x'.repeat(max))))).status).toBe(200);
      expect(errorMessage(await list(leaf(eq(property, 'x'.repeat(max + 1)))), 400)).toMatch(new RegExp(`at most ${max} characters`));
      expect(errorMessage(await list(leaf({ in: { property, values: ['x'.repeat(max + 1)] } })), 400)).toMatch(/values\[0\]/);
    }
  });

  it('changes nothing when a request is refused', async () => {
    const before = (await h.post('/events/aggregate', {})).body.items[0].count;
    await h.post('/events', { items: [{ externalId: 'never-1' }, { startTime: -1 }] });
    expect((await h.post('/events/aggregate', {})).body.items[0].count).toBe(before);
  });
});
