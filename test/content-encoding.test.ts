/**
 * Compressed request bodies, as the official Python SDK sends every POST (gzip by default).
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const BODY_LIMIT = 64 * 1024;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ bodyLimit: BODY_LIMIT });
});
afterAll(() => h.close());

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const send = (path: string, body: Buffer, encoding: string) =>
  h.request('POST', path, body, { 'content-type': 'application/json', 'content-encoding': encoding });
const countOf = async (externalIdPrefix: string): Promise<number> => {
  const res = await h.post('/events/list', { filter: { externalIdPrefix }, limit: 1000 });
  expect(res.status).toBe(200);
  return res.body.items.length;
};

describe('compressed request bodies', () => {
  it('decodes gzip, deflate and br bodies, and identity, on writes and reads', async () => {
    const cases: Array<[string, (b: Buffer) => Buffer]> = [
      ['gzip', gzipSync],
      ['x-gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ['identity', (b) => b],
      ['GZIP', gzipSync],
    ];
    for (const [encoding, encode] of cases) {
      const items = [{ externalId: `ce-${encoding}-1`, type: 'compressed', metadata: { encoding } }, { externalId: `ce-${encoding}-2` }];
      const created = await send('/events', encode(json({ items })), encoding);
      expect(created.status, encoding).toBe(201);
      expect(created.body.items.map((e: { externalId: string }) => e.externalId)).toEqual([`ce-${encoding}-1`, `ce-${encoding}-2`]);
      const listed = await send('/events/list', encode(json({ filter: { externalIdPrefix: `ce-${encoding}-` } })), encoding);
      expect(listed.status, encoding).toBe(200);
      expect(listed.body.items).toHaveLength(2);
    }
  });

  it('decodes codings applied one after another, last listed first', async () => {
    const body = brotliCompressSync(gzipSync(json({ items: [{ externalId: 'ce-stacked' }] })));
    expect((await send('/events', body, 'gzip, br')).status).toBe(201);
    expect(await countOf('ce-stacked')).toBe(1);
  });

  it('refuses an encoding it cannot decode with 415 naming it, and creates nothing', async () => {
    const body = json({ items: [{ externalId: 'ce-unknown' }] });
    expect(errorMessage(await send('/events', body, 'compress'), 415)).toMatch(/Content-Encoding "compress" is not supported.*gzip, deflate or br/);
    expect(errorMessage(await send('/events', gzipSync(body), 'gzip, zstd'), 415)).toMatch(/"zstd"/);
    const many = Array(1000).fill('gzip').join(', ');
    expect(errorMessage(await send('/events', gzipSync(body), many), 415)).toMatch(/lists 1000 codings; at most 3/);
    expect(await countOf('ce-unknown')).toBe(0);
  });

  it('refuses content that is not what its Content-Encoding says with 400, and creates nothing', async () => {
    const plain = json({ items: [{ externalId: 'ce-corrupt' }] });
    expect(errorMessage(await send('/events', plain, 'gzip'), 400)).toMatch(/not valid gzip content \(Content-Encoding\)/);
    const truncated = gzipSync(plain).subarray(0, 20);
    expect(errorMessage(await send('/events', truncated, 'gzip'), 400)).toMatch(/not valid gzip content/);
    expect(errorMessage(await send('/events', deflateSync(plain), 'br'), 400)).toMatch(/not valid br content/);
    expect(await countOf('ce-corrupt')).toBe(0);
  });

  it('applies the body size limit to the decoded body, so a small compressed body cannot expand past it', async () => {
    const bomb = gzipSync(json({ items: [{ externalId: 'ce-bomb', description: 'x'.repeat(400), metadata: { k: 'v'.repeat(BODY_LIMIT * 4) } }] }));
    expect(bomb.length).toBeLessThan(BODY_LIMIT / 16);
    expect(errorMessage(await send('/events', bomb, 'gzip'), 413)).toMatch(new RegExp(`larger than the limit of ${BODY_LIMIT} bytes`));
    expect(await countOf('ce-bomb')).toBe(0);
  });

  it('never fails a request over a body it does not read, and reports an empty body as empty', async () => {
    expect((await h.request('GET', '/events', undefined, { 'content-encoding': 'gzip' })).status).toBe(200);
    expect((await h.request('GET', '/events', 'not gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' })).status).toBe(200);
    expect((await h.request('GET', '/events', 'not gzip', { 'content-type': 'application/json', 'content-encoding': 'zstd' })).status).toBe(415);
    expect(errorMessage(await send('/events/list', Buffer.alloc(0), 'gzip'), 400)).toMatch(/empty/);
    // The server is still up and answering.
    expect((await h.post('/events/list', {})).status).toBe(200);
  });

  it('reports malformed JSON inside a well-formed gzip body as malformed JSON', async () => {
    expect(errorMessage(await send('/events/list', gzipSync(Buffer.from('{"limit":')), 'gzip'), 400)).toMatch(/not valid JSON/);
  });
});
