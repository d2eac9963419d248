/**
 * The rows of sequences over HTTP, on both backends: insert by row number (replacing the values of the
 * columns given), values that keep their type exactly (doubles, 64-bit integers beyond 2^53, strings), range
 * and column reads paged by cursors, the latest row, deletes, and the input each operation refuses, with
 * nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const col = (externalId: string, valueType: string) => ({ externalId, valueType });

async function sequence(externalId: string, columns: Array<{ externalId: string; valueType: string }>) {
  const res = await h.post('/sequences', { items: [{ externalId, columns }] });
  if (res.status !== 201) throw new Error(`create: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0] as { id: number };
}

const insert = (items: unknown[]) => h.post('/sequences/data', { items });
const list = (body: Record<string, unknown>) => h.post('/sequences/data/list', body);

/** The answer's text as sent, for what JSON.parse would change (64-bit integers, `2.0`). */
async function raw(path: string, body: unknown): Promise<string> {
  const res = await h.strata.app.inject({
    method: 'POST',
    url: `${h.base}${path}`,
    headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode} ${res.body}`);
  return res.body;
}

/** Every row of a listing, following its cursors; `pages` counts the requests. */
async function allRows(body: Record<string, unknown>): Promise<{ rows: Array<{ rowNumber: number; values: unknown[] }>; pages: number }> {
  const rows = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const res = await list({ ...body, ...(cursor ? { cursor } : {}) });
    if (res.status !== 200) throw new Error(`list: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    pages++;
    rows.push(...res.body.rows);
    cursor = res.body.nextCursor;
  } while (cursor);
  return { rows, pages };
}

describe('inserting rows', () => {
  beforeAll(async () => {
    await sequence('mixed', [col('n', 'LONG'), col('x', 'DOUBLE'), col('s', 'STRING')]);
  });

  it('writes rows by row number, and answers the columns read with their types', async () => {
    expect((await insert([{ externalId: 'mixed', columns: ['n', 'x', 's'], rows: [0, 1, 2].map((i) => ({ rowNumber: i, values: [i, i + 0.5, `r${i}`] })) }])).body).toEqual({});
    const res = await list({ externalId: 'mixed' });
    expect(res.body).toEqual({
      id: expect.any(Number),
      externalId: 'mixed',
      columns: [
        { externalId: 'n', valueType: 'LONG' },
        { externalId: 'x', valueType: 'DOUBLE' },
        { externalId: 's', valueType: 'STRING' },
      ],
      rows: [
        { rowNumber: 0, values: [0, 0.5, 'r0'] },
        { rowNumber: 1, values: [1, 1.5, 'r1'] },
        { rowNumber: 2, values: [2, 2.5, 'r2'] },
      ],
    });
  });

  it('replaces only the columns given; null clears a value', async () => {
    await insert([{ externalId: 'mixed', columns: ['s', 'x'], rows: [{ rowNumber: 1, values: ['changed', null] }] }]);
    expect((await list({ externalId: 'mixed', start: 1, end: 2 })).body.rows).toEqual([{ rowNumber: 1, values: [1, null, 'changed'] }]);
    // A row given twice in one item: the later one wins.
    await insert([{ externalId: 'mixed', columns: ['n', 's'], rows: [{ rowNumber: 2, values: [10, 'first'] }, { rowNumber: 2, values: [20, null] }] }]);
    expect((await list({ externalId: 'mixed' })).body.rows).toEqual([
      { rowNumber: 0, values: [0, 0.5, 'r0'] },
      { rowNumber: 1, values: [1, null, 'changed'] },
      { rowNumber: 2, values: [20, 2.5, null] },
    ]);
    // A row given for every column replaces the row whole.
    await insert([{ externalId: 'mixed', columns: ['x', 'n', 's'], rows: [{ rowNumber: 2, values: [null, 7, null] }] }]);
    expect((await list({ externalId: 'mixed', start: 2 })).body.rows).toEqual([{ rowNumber: 2, values: [7, null, null] }]);
  });

  it('keeps values exactly: doubles as doubles (2.0), 64-bit integers beyond 2^53, any string', async () => {
    await sequence('exact', [col('long', 'LONG'), col('double', 'DOUBLE'), col('text', 'STRING')]);
    const body =
      '{"items":[{"externalId":"exact","columns":["long","double","text"],"rows":[' +
      '{"rowNumber":1,"values":[9223372036854775807,2,"æøå 😀 \\"quoted\\""]},' +
      '{"rowNumber":2,"values":[-9223372036854775808,0.1,""]},' +
      '{"rowNumber":3,"values":[9007199254740993,1e100,"x"]},' +
      '{"rowNumber":4,"values":[-12,-1.7976931348623157e-300,null]}]}]}';
    expect(await raw('/sequences/data', body)).toBe('{}\n');
    const text = await raw('/sequences/data/list', { externalId: 'exact' });
    expect(text).toContain('{"rowNumber":1,"values":[9223372036854775807,2.0,"æøå 😀 \\"quoted\\""]}');
    expect(text).toContain('{"rowNumber":2,"values":[-9223372036854775808,0.1,""]}');
    expect(text).toContain('{"rowNumber":3,"values":[9007199254740993,1e+100,"x"]}');
    expect(text).toContain('{"rowNumber":4,"values":[-12,-1.7976931348623157e-300,null]}');
    const latest = await raw('/sequences/data/latest', { externalId: 'exact', columns: ['long'], before: 3 });
    expect(latest).toContain('"rows":[{"rowNumber":2,"values":[-9223372036854775808]}]');
  });

  it('takes a number sent as a string in a numeric column, as the reference does', async () => {
    await sequence('coerced', [col('d', 'DOUBLE'), col('l', 'LONG')]);
    await insert([{ externalId: 'coerced', columns: ['d', 'l'], rows: [{ rowNumber: 1, values: ['1', '-42'] }, { rowNumber: 2, values: ['2.5e3', '9223372036854775807'] }] }]);
    expect(await raw('/sequences/data/list', { externalId: 'coerced' })).toContain('"rows":[{"rowNumber":1,"values":[1.0,-42]},{"rowNumber":2,"values":[2500.0,9223372036854775807]}]');
  });

  it('writes all the items of a request in one transaction: a bad item leaves every item unwritten', async () => {
    await sequence('atomic', [col('v', 'DOUBLE')]);
    const res = await insert([
      { externalId: 'atomic', columns: ['v'], rows: [{ rowNumber: 1, values: [1] }] },
      { externalId: 'mixed', columns: ['n'], rows: [{ rowNumber: 9, values: ['nine'] }] },
    ]);
    expect(errorMessage(res, 400)).toBe('items[1].rows[0].values[0]: expected an integer for the LONG column "n", got the string "nine"');
    expect((await list({ externalId: 'atomic' })).body.rows).toEqual([]);
    expect((await list({ externalId: 'mixed', start: 9 })).body.rows).toEqual([]);
  });
});

describe('bad input to inserts', () => {
  beforeAll(async () => {
    await sequence('strict', [col('n', 'LONG'), col('x', 'DOUBLE'), col('s', 'STRING')]);
  });
  const one = (columns: string[], values: unknown[], rowNumber = 1) => insert([{ externalId: 'strict', columns, rows: [{ rowNumber, values }] }]);

  it('refuses values of the wrong number or type, naming the place and the column', async () => {
    const cases: Array<[Response, string]> = [
      [await one(['n', 'x'], [1]), 'items[0].rows[0].values: 1 values for 2 columns; give one value (or null) for each column in "columns", in its order'],
      [await one(['n'], [1.5]), 'items[0].rows[0].values[0]: expected an integer for the LONG column "n", got 1.5'],
      [await one(['x'], ['abc']), 'items[0].rows[0].values[0]: expected a number for the DOUBLE column "x", got the string "abc"'],
      [await one(['s'], [12]), 'items[0].rows[0].values[0]: expected a string for the STRING column "s", got 12'],
      [await one(['s'], [true]), 'items[0].rows[0].values[0]: expected a string for the STRING column "s", got true'],
      [await one(['x'], [{ v: 1 }]), 'items[0].rows[0].values[0]: expected a number for the DOUBLE column "x", got an object'],
      [await one(['x'], [1e101]), 'items[0].rows[0].values[0]: 1e+101 is outside the range of a DOUBLE column (-1e100 to 1e100)'],
      [await one(['s'], ['y'.repeat(257)]), 'items[0].rows[0].values[0]: a STRING value has at most 256 characters, got 257'],
      [await one(['n', 's'], [null, null]), 'items[0].rows[0].values: every value is null; a row needs at least one value'],
      [await one(['n', 'q'], [1, 2]), 'items[0].columns[1]: the sequence has no column "q"'],
      [await one(['n', 'n'], [1, 2]), 'items[0].columns[1]: the column "n" is named more than once'],
    ];
    for (const [res, message] of cases) expect(errorMessage(res, 400)).toBe(message);
    const huge = await raw('/sequences/data', '{"items":[{"externalId":"strict","columns":["n"],"rows":[{"rowNumber":1,"values":[9223372036854775808]}]}]}').catch((e: Error) => e.message);
    expect(huge).toMatch(/HTTP 400 .*9223372036854775808 is outside the range of a LONG column/);
    expect(errorMessage(await one(['n'], [1], -1), 400)).toMatch(/items\[0\]\.rows\[0\]\.rowNumber/);
    const bigRow = await raw('/sequences/data', '{"items":[{"externalId":"strict","columns":["n"],"rows":[{"rowNumber":12345678901234567,"values":[1]}]}]}').catch((e: Error) => e.message);
    expect(bigRow).toContain('items[0].rows[0].rowNumber: expected integer, got 12345678901234567, an integer beyond the range allowed here');
    expect((await list({ externalId: 'strict' })).body.rows).toEqual([]);
  });

  it('refuses requests beyond 10,000 rows or 100,000 values, and unknown sequences', async () => {
    const rows = (n: number, width: number) => Array.from({ length: n }, (_, i) => ({ rowNumber: i, values: Array(width).fill(1) }));
    expect(errorMessage(await insert([{ externalId: 'strict', columns: ['n'], rows: rows(10_000, 1) }, { externalId: 'strict', columns: ['x'], rows: rows(1, 1) }]), 400)).toBe(
      'items: 10001 rows in one request; at most 10000 are allowed',
    );
    expect(errorMessage(await insert([{ externalId: 'strict', columns: ['n', 'x', 's'], rows: rows(33_334, 3) }]), 400)).toMatch(/rows/);
    const wide = await h.post('/sequences', { items: [{ externalId: 'wide', columns: Array.from({ length: 20 }, (_, i) => col(`c${i}`, 'DOUBLE')) }] });
    expect(wide.status).toBe(201);
    const names = Array.from({ length: 20 }, (_, i) => `c${i}`);
    expect(errorMessage(await insert([{ externalId: 'wide', columns: names, rows: rows(5001, 20) }]), 400)).toBe(
      'items: 100020 values (nulls included) in one request; at most 100000 are allowed',
    );
    const unknown = await insert([{ externalId: 'no-such-sequence', columns: ['n'], rows: rows(1, 1) }]);
    expect(errorMessage(unknown, 400)).toBeTruthy();
    expect(unknown.body.error.missing).toEqual([{ externalId: 'no-such-sequence' }]);
  });
});

describe('reading rows', () => {
  beforeAll(async () => {
    await sequence('paged', [col('a', 'LONG'), col('b', 'STRING')]);
    const rows = Array.from({ length: 250 }, (_, i) => ({ rowNumber: i * 2, values: [i, i % 3 === 0 ? `s${i}` : null] }));
    await insert([{ externalId: 'paged', columns: ['a', 'b'], rows }]);
  });

  it('pages a range in row order by cursors; the pages together are the range', async () => {
    const { rows, pages } = await allRows({ externalId: 'paged', start: 11, end: 301, limit: 40 });
    expect(rows.map((r) => r.rowNumber)).toEqual(Array.from({ length: 145 }, (_, i) => 12 + 2 * i));
    expect(pages).toBe(4);
    expect(rows[0]).toEqual({ rowNumber: 12, values: [6, 's6'] });
    // A page that reaches the end of the range has no cursor, though rows follow it.
    const exact = await list({ externalId: 'paged', start: 0, end: 20, limit: 10 });
    expect(exact.body.rows).toHaveLength(10);
    expect(exact.body).not.toHaveProperty('nextCursor');
  });

  it('reads the columns asked for, in their order, leaving out rows with no value in them', async () => {
    const { rows } = await allRows({ externalId: 'paged', columns: ['b'], limit: 1000 });
    expect(rows).toEqual(Array.from({ length: 84 }, (_, k) => ({ rowNumber: 6 * k, values: [`s${3 * k}`] })));
    const page = await list({ externalId: 'paged', columns: ['b'], limit: 10 });
    expect(page.body.rows.map((r: { rowNumber: number }) => r.rowNumber)).toEqual(Array.from({ length: 10 }, (_, k) => 6 * k));
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const both = await list({ externalId: 'paged', columns: ['b', 'a'], start: 0, end: 3 });
    expect(both.body.columns).toEqual([
      { externalId: 'b', valueType: 'STRING' },
      { externalId: 'a', valueType: 'LONG' },
    ]);
    expect(both.body.rows).toEqual([
      { rowNumber: 0, values: ['s0', 0] },
      { rowNumber: 2, values: [null, 1] },
    ]);
  });

  it('takes the nulls the official Python SDK sends, and refuses a cursor of another query', async () => {
    const first = await list({ externalId: 'paged', start: 0, end: null, limit: 5, cursor: null });
    expect(first.body.rows).toHaveLength(5);
    // The Python SDK asks for what it still needs, so the limit may change from page to page.
    expect((await list({ externalId: 'paged', start: 0, end: null, limit: 7, cursor: first.body.nextCursor })).body.rows[0].rowNumber).toBe(10);
    expect(errorMessage(await list({ externalId: 'paged', start: 1, limit: 5, cursor: first.body.nextCursor }), 400)).toMatch(/cursor/);
    expect(errorMessage(await list({ externalId: 'paged', columns: ['a'], limit: 5, cursor: first.body.nextCursor }), 400)).toMatch(/cursor/);
    expect(errorMessage(await list({ externalId: 'paged', cursor: 'garbage' }), 400)).toMatch(/cursor/);
    expect(errorMessage(await list({ externalId: 'paged', columns: ['zz'] }), 400)).toBe('columns[0]: the sequence has no column "zz"');
    expect(errorMessage(await list({ externalId: 'paged', id: 1 }), 400)).toMatch(/exactly one of "id" and "externalId"/);
    expect(errorMessage(await list({ externalId: 'paged', limit: 10_001 }), 400)).toMatch(/limit/);
  });

  it('gives fewer rows per page when the columns are many: 100,000 values a page, a STRING counting as two', async () => {
    await h.post('/sequences', { items: [{ externalId: 'strings', columns: Array.from({ length: 200 }, (_, i) => col(`c${i}`, 'STRING')) }] });
    const names = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const rows = Array.from({ length: 400 }, (_, i) => ({ rowNumber: i, values: names.map(() => 'v') }));
    expect((await insert([{ externalId: 'strings', columns: names, rows }])).status).toBe(200);
    const { rows: read, pages } = await allRows({ externalId: 'strings', start: 1, end: 400, limit: 10_000 });
    expect(read).toHaveLength(399);
    expect(pages).toBe(2);
    expect((await list({ externalId: 'strings', columns: ['c0'], limit: 10_000 })).body.rows).toHaveLength(400);
  });

  it('gives the latest row before a row number, with a value in the columns asked for', async () => {
    const latest = (body: Record<string, unknown>) => h.post('/sequences/data/latest', { externalId: 'paged', ...body });
    expect((await latest({})).body.rows).toEqual([{ rowNumber: 498, values: [249, 's249'] }]);
    expect((await latest({ before: 498 })).body.rows).toEqual([{ rowNumber: 496, values: [248, null] }]);
    expect((await latest({ before: 498, columns: ['b'] })).body.rows).toEqual([{ rowNumber: 492, values: ['s246'] }]);
    expect((await latest({ before: null, columns: null })).body.rows[0].rowNumber).toBe(498);
    expect((await latest({ before: 1 })).body.rows).toEqual([{ rowNumber: 0, values: [0, 's0'] }]);
    await sequence('empty', [col('a', 'DOUBLE')]);
    expect((await h.post('/sequences/data/latest', { externalId: 'empty' })).body).toEqual({ id: expect.any(Number), externalId: 'empty', columns: [{ externalId: 'a', valueType: 'DOUBLE' }], rows: [] });
    expect(errorMessage(await latest({ before: 0 }), 400)).toMatch(/before/);
  });
});

describe('deleting rows', () => {
  it('deletes the rows named (those that do not exist are no error), all columns of them', async () => {
    await sequence('deleting', [col('a', 'LONG'), col('b', 'DOUBLE')]);
    await insert([{ externalId: 'deleting', columns: ['a', 'b'], rows: [1, 2, 3, 5, 8].map((n) => ({ rowNumber: n, values: [n, n] })) }]);
    expect((await h.post('/sequences/data/delete', { items: [{ externalId: 'deleting', rows: [2, 5, 42, 3524] }] })).body).toEqual({});
    expect((await list({ externalId: 'deleting' })).body.rows.map((r: { rowNumber: number }) => r.rowNumber)).toEqual([1, 3, 8]);
    const unknown = await h.post('/sequences/data/delete', { items: [{ externalId: 'deleting', rows: [1] }, { externalId: 'no-such', rows: [1] }] });
    expect(unknown.body.error.missing).toEqual([{ externalId: 'no-such' }]);
    expect((await list({ externalId: 'deleting' })).body.rows).toHaveLength(3);
  });

  it('keeps the values of a removed column out of every read, and out of a column added later', async () => {
    await sequence('reshaped', [col('a', 'LONG'), col('b', 'LONG')]);
    await insert([{ externalId: 'reshaped', columns: ['a', 'b'], rows: [{ rowNumber: 1, values: [1, 2] }, { rowNumber: 2, values: [null, 3] }] }]);
    await h.post('/sequences/update', { items: [{ externalId: 'reshaped', update: { columns: { remove: ['b'], add: [col('b', 'LONG')] } } }] });
    expect((await list({ externalId: 'reshaped' })).body.rows).toEqual([{ rowNumber: 1, values: [1, null] }]);
    expect((await h.post('/sequences/data/latest', { externalId: 'reshaped', columns: ['b'] })).body.rows).toEqual([]);
  });
});
