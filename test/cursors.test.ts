/**
 * Cursors are one codec for every list: encrypted (a sort value such as a metadata value cannot be read
 * from one), bound to their query, and refused with a 400 when tampered with, reused with other
 * parameters or brought from another server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
const SECRET_VALUE = 'Kristiansand-Plant-7';
const bySite = { filter: { type: 'cursor-test' }, sort: [{ property: ['metadata', 'site'] }], limit: 1 };

beforeAll(async () => {
  h = await startHarness();
  const created = await h.post('/events', {
    items: [`${SECRET_VALUE}-a`, `${SECRET_VALUE}-b`, `${SECRET_VALUE}-c`].map((site) => ({ type: 'cursor-test', metadata: { site } })),
  });
  expect(created.status).toBe(201);
});
afterAll(() => h.close());

/** What a cursor's bytes show to whoever reads them, in the encodings a reader would try. */
function readable(cursor: string): string {
  const bytes = Buffer.from(cursor, 'base64url');
  return `${cursor}\n${bytes.toString('latin1')}\n${bytes.toString('utf8')}`;
}

function tampered(cursor: string, at: number): string {
  const bytes = Buffer.from(cursor, 'base64url');
  bytes[at] ^= 0x01;
  return bytes.toString('base64url');
}

describe('cursors', () => {
  it('carry no readable sort value, stay short, and page correctly', async () => {
    const first = await h.post('/events/list', bySite);
    const cursor = first.body.nextCursor as string;
    expect(readable(cursor)).not.toContain('Kristiansand');
    expect(readable(cursor)).not.toMatch(/"v"|"s"/);
    expect(cursor.length).toBeLessThan(120);
    const second = await h.post('/events/list', { ...bySite, cursor });
    expect(second.body.items.map((e: { metadata: { site: string } }) => e.metadata.site)).toEqual([`${SECRET_VALUE}-b`]);
    // The same page of the same query gets the same cursor; the next page another.
    expect((await h.post('/events/list', bySite)).body.nextCursor).toBe(cursor);
    expect(second.body.nextCursor).not.toBe(cursor);
  });

  it('refuse a tampered cursor', async () => {
    const cursor = (await h.post('/events/list', bySite)).body.nextCursor as string;
    const length = Buffer.from(cursor, 'base64url').length;
    for (const at of [0, 10, 17, 21, Math.floor(length / 2), length - 1]) {
      expect(errorMessage(await h.post('/events/list', { ...bySite, cursor: tampered(cursor, at) }), 400)).toMatch(/^cursor: /);
    }
    for (const mangled of [cursor.slice(0, -2), `${cursor}AA`, `${cursor.slice(0, 10)}!${cursor.slice(11)}`, 'e30', '']) {
      expect(errorMessage(await h.post('/events/list', { ...bySite, cursor: mangled }), 400)).toMatch(/cursor/);
    }
  });

  it('refuse a cursor reused with other parameters, saying so', async () => {
    const cursor = (await h.post('/events/list', bySite)).body.nextCursor as string;
    const other = { ...bySite, sort: [{ property: ['metadata', 'site'], order: 'desc' }], cursor };
    expect(errorMessage(await h.post('/events/list', other), 400)).toMatch(/^cursor: this cursor does not belong to this query; send it with the same parameters/);
  });

  it('refuse a cursor of another server', async () => {
    const cursor = (await h.post('/events/list', bySite)).body.nextCursor as string;
    const elsewhere = await startHarness();
    try {
      await elsewhere.post('/events', { items: [1, 2].map((n) => ({ type: 'cursor-test', metadata: { site: `s${n}` } })) });
      expect(errorMessage(await elsewhere.post('/events/list', { ...bySite, cursor }), 400)).toBe('cursor: not a cursor issued by this server');
    } finally {
      await elsewhere.close();
    }
  });

  it('of data points are the same codec: no readable position', async () => {
    const series = await h.post('/timeseries', { items: [{ externalId: 'cursor-series' }] });
    expect(series.status).toBe(201);
    const timestamp = 1_234_567_890_123;
    await h.post('/timeseries/data', { items: [{ externalId: 'cursor-series', datapoints: [0, 1, 2].map((i) => ({ timestamp: timestamp + i, value: i })) }] });
    const query = { items: [{ externalId: 'cursor-series', start: timestamp, end: timestamp + 10, limit: 1 }] };
    const page = await h.post('/timeseries/data/list', query);
    const cursor = page.body.items[0].nextCursor as string;
    expect(readable(cursor)).not.toContain('12345678');
    const tamperedQuery = { items: [{ ...query.items[0], cursor: tampered(cursor, 30) }] };
    expect(errorMessage(await h.post('/timeseries/data/list', tamperedQuery), 400)).toMatch(/items\[0\]\.cursor: /);
  });
});
