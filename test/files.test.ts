/**
 * Files over HTTP: metadata (create, overwrite, read, list, filter, search, count, update, delete) and
 * content through signed links (single and multipart uploads, downloads with ranges), with the links' rules:
 * no token, bound to their file and content, used once (uploads), expiring, and refused when changed.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../src/storage/sql.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

const MiB = 1024 * 1024;
let h: Harness;
let now = Date.UTC(2025, 0, 1);

beforeAll(async () => {
  h = await startHarness({}, {}, { now: () => now });
});
afterAll(() => h.close());

/** A request to a signed link, as a client without a token sends it. */
async function link(method: 'GET' | 'PUT' | 'HEAD', url: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Response & { raw: Buffer }> {
  const { pathname, search } = new URL(url);
  const res = await h.strata.app.inject({ method, url: pathname + search, headers, ...(body !== undefined ? { payload: body } : {}) });
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    parsed = res.body;
  }
  return { status: res.statusCode, body: parsed, headers: res.headers, raw: res.rawPayload };
}

async function createFile(item: object, query = ''): Promise<any> {
  const res = await h.post(`/files${query}`, item);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function file(id: number): Promise<any> {
  const res = await h.get(`/files/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function downloadUrl(ref: object, query = ''): Promise<string> {
  const res = await h.post(`/files/downloadlink${query}`, { items: [ref] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items[0].downloadUrl;
}

describe('single uploads', () => {
  it('creates a file, takes its content through the link without a token, and gives it back', async () => {
    const created = await createFile({ externalId: 'doc-1', name: 'report.txt', mimeType: 'text/plain', directory: '/reports', metadata: { Site: 'Oslo' } });
    expect(created).toMatchObject({ externalId: 'doc-1', name: 'report.txt', uploaded: false, metadata: { Site: 'Oslo' } });
    expect(created.uploadUrl).toMatch(/^http.*\/links\/file-upload\?token=/);
    expect(created.uploadUrl).not.toContain(h.token);
    const put = await link('PUT', created.uploadUrl, 'hello, files', { 'content-type': 'text/plain' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const after = await file(created.id);
    expect(after).toMatchObject({ uploaded: true, uploadedTime: now });
    const url = await downloadUrl({ externalId: 'doc-1' });
    expect(url).not.toContain(h.token);
    const got = await link('GET', url);
    expect(got.status).toBe(200);
    expect(got.raw.toString()).toBe('hello, files');
    expect(got.headers['content-type']).toBe('text/plain');
    expect(got.headers['content-length']).toBe('12');
  });

  it('takes binary content of any type, and an empty body as empty content', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    const a = await createFile({ name: 'a.bin' });
    expect((await link('PUT', a.uploadUrl, bytes, { 'content-type': 'application/json' })).status).toBe(200);
    expect((await link('GET', await downloadUrl({ id: a.id }))).raw.equals(bytes)).toBe(true);
    const b = await createFile({ name: 'empty' });
    expect((await link('PUT', b.uploadUrl)).status).toBe(200);
    const got = await link('GET', await downloadUrl({ id: b.id }));
    expect(got.headers['content-type']).toBe('application/octet-stream');
    expect(got.raw.length).toBe(0);
  });

  it('stores the decoded content of a compressed body', async () => {
    const f = await createFile({ name: 'zipped.txt' });
    const res = await link('PUT', f.uploadUrl, gzipSync(Buffer.from('compressed on the wire')), { 'content-encoding': 'gzip' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('compressed on the wire');
  });

  it('refuses a used upload link with 410, and keeps the content of the first upload', async () => {
    const f = await createFile({ name: 'once.txt' });
    expect((await link('PUT', f.uploadUrl, 'first')).status).toBe(200);
    const again = await link('PUT', f.uploadUrl, 'second');
    expect(errorMessage(again, 410)).toMatch(/used already/);
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('first');
  });

  it('refuses a tampered link with 403 and an expired one with 410, storing nothing', async () => {
    const f = await createFile({ name: 'guarded.txt' });
    const url = new URL(f.uploadUrl);
    const token = url.searchParams.get('token')!;
    const [payload, mac] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const other = await createFile({ name: 'other.txt' });
    claims.c.f = other.id;
    const forged = `${url.origin}${url.pathname}?token=${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
    expect(errorMessage(await link('PUT', forged, 'x'), 403)).toMatch(/not valid/);
    const flipped = `${url.origin}${url.pathname}?token=${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(errorMessage(await link('PUT', flipped, 'x'), 403)).toMatch(/not valid/);
    // A link of one kind is not one of another.
    const asDownload = f.uploadUrl.replace('/links/file-upload', '/links/file-download');
    expect(errorMessage(await link('GET', asDownload), 403)).toMatch(/not valid/);
    const saved = now;
    now += 8 * 86_400_000;
    try {
      expect(errorMessage(await link('PUT', f.uploadUrl, 'late'), 410)).toMatch(/expired/);
    } finally {
      now = saved;
    }
    expect((await file(f.id)).uploaded).toBe(false);
    expect((await file(other.id)).uploaded).toBe(false);
  });

  it('gives a new link for an existing file by id, external id or instance id, and the new content replaces the old', async () => {
    const f = await createFile({ externalId: 'replace-me', name: 'v.txt' });
    await link('PUT', f.uploadUrl, 'version 1');
    const oldUrl = await downloadUrl({ id: f.id });
    const res = await h.post('/files/uploadlink', { items: [{ externalId: 'replace-me' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items[0]).toMatchObject({ id: f.id, uploaded: true });
    expect((await link('PUT', res.body.items[0].uploadUrl, 'version 2')).status).toBe(200);
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('version 2');
    // A download link is bound to the content it was made for.
    expect(errorMessage(await link('GET', oldUrl), 410)).toMatch(/replaced/);
    expect(errorMessage(await h.post('/files/uploadlink', { items: [{ id: f.id }, { id: f.id }] }), 400)).toMatch(/at most 1/);
  });

  it('refuses a body larger than the content-length limit before reading it', async () => {
    const f = await createFile({ name: 'big.bin' });
    const { pathname, search } = new URL(f.uploadUrl);
    const res = await h.strata.app.inject({ method: 'PUT', url: pathname + search, headers: { 'content-length': String(6_000_000_000) }, payload: '' });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.message).toMatch(/Content-Length/);
  });

  it('answers a range request with 206 and the bytes asked for, and 416 past the end', async () => {
    const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    const f = await createFile({ name: 'ranged.bin', mimeType: 'application/x-test' });
    await link('PUT', f.uploadUrl, content);
    const url = await downloadUrl({ id: f.id });
    const mid = await link('GET', url, undefined, { range: 'bytes=100-199' });
    expect(mid.status).toBe(206);
    expect(mid.headers['content-range']).toBe('bytes 100-199/1000');
    expect(mid.headers['content-length']).toBe('100');
    expect(mid.raw.equals(content.subarray(100, 200))).toBe(true);
    const tail = await link('GET', url, undefined, { range: 'bytes=-10' });
    expect(tail.raw.equals(content.subarray(990))).toBe(true);
    const open = await link('GET', url, undefined, { range: 'bytes=995-' });
    expect(open.raw.equals(content.subarray(995))).toBe(true);
    const past = await link('GET', url, undefined, { range: 'bytes=1000-' });
    expect(errorMessage(past, 416)).toMatch(/1000 bytes/);
    expect(past.headers['content-range']).toBe('bytes */1000');
    expect((await link('GET', url)).raw.equals(content)).toBe(true);
  });

  it('answers HEAD on a download link with the headers of the GET, without reading the content', async () => {
    const content = Buffer.alloc(4096, 7);
    const f = await createFile({ name: 'head.bin', mimeType: 'application/x-test' });
    await link('PUT', f.uploadUrl, content);
    const url = await downloadUrl({ id: f.id });
    const blobs = h.strata.services.blobs!;
    const get = blobs.get.bind(blobs);
    let reads = 0;
    blobs.get = (...args: Parameters<typeof get>) => {
      reads++;
      return get(...args);
    };
    try {
      const whole = await link('HEAD', url);
      expect(whole.status).toBe(200);
      expect(whole.headers['content-length']).toBe('4096');
      expect(whole.headers['content-type']).toBe('application/x-test');
      expect(whole.raw.length).toBe(0);
      const part = await link('HEAD', url, undefined, { range: 'bytes=0-9' });
      expect(part.status).toBe(206);
      expect(part.headers['content-range']).toBe('bytes 0-9/4096');
      expect(part.headers['content-length']).toBe('10');
      expect(reads).toBe(0);
      expect((await link('GET', url)).raw.equals(content)).toBe(true);
      expect(reads).toBe(1);
    } finally {
      blobs.get = get;
    }
  });

  it('refuses download links for files whose upload never completed, naming them', async () => {
    const f = await createFile({ externalId: 'never-uploaded', name: 'n.txt' });
    const res = await h.post('/files/downloadlink', { items: [{ externalId: 'never-uploaded' }] });
    expect(errorMessage(res, 400)).toMatch(/Files not uploaded: \{"externalId":"never-uploaded"\}/);
    expect((await file(f.id)).uploaded).toBe(false);
  });

  it('expires download links after 30 seconds, or an hour when extended', async () => {
    const f = await createFile({ name: 'short.txt' });
    await link('PUT', f.uploadUrl, 'x');
    const short = await downloadUrl({ id: f.id });
    const long = await downloadUrl({ id: f.id }, '?extendedExpiration=true');
    const saved = now;
    now += 31_000;
    try {
      expect(errorMessage(await link('GET', short), 410)).toMatch(/expired/);
      expect((await link('GET', long)).status).toBe(200);
      now += 3_600_000;
      expect((await link('GET', long)).status).toBe(410);
    } finally {
      now = saved;
    }
  });

  it('echoes each reference with its link, and allows 100 per request', async () => {
    const f = await createFile({ externalId: 'echo', name: 'e.txt' });
    await link('PUT', f.uploadUrl, 'e');
    const res = await h.post('/files/downloadlink', { items: [{ id: f.id }, { externalId: 'echo' }] });
    expect(res.body.items).toEqual([
      { id: f.id, downloadUrl: expect.any(String) },
      { externalId: 'echo', downloadUrl: expect.any(String) },
    ]);
    const many = await h.post('/files/downloadlink', { items: Array.from({ length: 101 }, (_, i) => ({ id: i + 1 })) });
    expect(errorMessage(many, 400)).toMatch(/items: must have at most 100 items/);
  });
});

describe('overwrite', () => {
  it('refuses a second file with the same external id, and overwrites its fields with overwrite=true', async () => {
    const f = await createFile({ externalId: 'ow', name: 'one.txt', source: 'a', metadata: { k: 'v' } });
    await link('PUT', f.uploadUrl, 'old content');
    const dup = await h.post('/files', { externalId: 'ow', name: 'two.txt' });
    expect(errorMessage(dup, 409)).toMatch(/ow/);
    const over = await createFile({ externalId: 'ow', name: 'two.txt', metadata: { other: 'x' } }, '?overwrite=true');
    expect(over.id).toBe(f.id);
    expect(over).toMatchObject({ name: 'two.txt', source: 'a', metadata: { other: 'x' }, uploaded: true });
    // Until the new upload, the old content stays.
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('old content');
    await link('PUT', over.uploadUrl, 'new content');
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('new content');
  });
});

describe('multipart uploads', () => {
  const part = (n: number, size: number) => Buffer.alloc(size, n + 1);

  it('takes parts in any order and side by side, and completes them in their order', async () => {
    const res = await h.post('/files/initmultipartupload?parts=3', { externalId: 'mp-1', name: 'parts.bin' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { id, uploadId, uploadUrls } = res.body;
    expect(uploadUrls).toHaveLength(3);
    const parts = [part(0, 5 * MiB), part(1, 5 * MiB), part(2, 1000)];
    const puts = await Promise.all([2, 0, 1].map((n) => link('PUT', uploadUrls[n], parts[n])));
    expect(puts.map((p) => p.status)).toEqual([200, 200, 200]);
    expect((await file(id)).uploaded).toBe(false);
    const done = await h.post('/files/completemultipartupload', { id, uploadId });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toEqual({});
    expect((await file(id)).uploaded).toBe(true);
    const got = await link('GET', await downloadUrl({ id }));
    expect(got.raw.equals(Buffer.concat(parts))).toBe(true);
    // Completing again changes nothing; the parts' links are used up.
    expect((await h.post('/files/completemultipartupload', { externalId: 'mp-1', uploadId })).status).toBe(200);
    expect((await link('PUT', uploadUrls[0], parts[0])).status).toBe(410);
  });

  it('refuses a completion with a missing part, a part uploaded twice, and parts under 5 MiB but the last', async () => {
    const res = await h.post('/files/initmultipartupload?parts=3', { name: 'incomplete.bin' });
    const { id, uploadId, uploadUrls } = res.body;
    await link('PUT', uploadUrls[0], part(0, 1000));
    expect(errorMessage(await link('PUT', uploadUrls[0], part(0, 1000)), 410)).toMatch(/Part 0 .* uploaded already/);
    await link('PUT', uploadUrls[2], part(2, 10));
    expect(errorMessage(await h.post('/files/completemultipartupload', { id, uploadId }), 400)).toMatch(/parts 1 of 3 were not uploaded/);
    expect(errorMessage(await h.post('/files/downloadlink', { items: [{ id }] }), 400)).toMatch(/Files not uploaded/);
    await link('PUT', uploadUrls[1], part(1, 10));
    expect(errorMessage(await h.post('/files/completemultipartupload', { id, uploadId }), 400)).toMatch(/part 0 has 1000 bytes/);
    expect((await file(id)).uploaded).toBe(false);
    expect(errorMessage(await h.post('/files/completemultipartupload', { id, uploadId: 'nope' }), 400)).toMatch(/not a multipart upload of this file/);
  });

  it('starts a multipart upload of an existing file, and refuses more than 250 parts', async () => {
    const f = await createFile({ externalId: 'mp-existing', name: 'x.bin' });
    const res = await h.post('/files/multiuploadlink?parts=1', { items: [{ externalId: 'mp-existing' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { uploadId, uploadUrls } = res.body.items[0];
    await link('PUT', uploadUrls[0], 'one part');
    expect((await h.post('/files/completemultipartupload', { externalId: 'mp-existing', uploadId })).status).toBe(200);
    expect((await link('GET', await downloadUrl({ id: f.id }))).raw.toString()).toBe('one part');
    expect(errorMessage(await h.post('/files/initmultipartupload?parts=251', { name: 'too many' }), 400)).toMatch(/parts/);
  });
});

describe('metadata', () => {
  let ds: number;
  let asset: number;
  beforeAll(async () => {
    ds = (await h.post('/datasets', { items: [{ externalId: 'files-ds' }] })).body.items[0].id;
    asset = (await h.post('/assets', { items: [{ externalId: 'files-root', name: 'root' }] })).body.items[0].id;
    await h.post('/files', { externalId: 'm-1', name: 'pump drawing.pdf', directory: '/plant/a', mimeType: 'application/pdf', source: 'cad', dataSetId: ds, assetIds: [asset], labels: [{ externalId: 'drawing' }] });
    await h.post('/files', { externalId: 'm-2', name: 'valve photo.jpg', directory: '/plant/b', mimeType: 'image/jpeg', metadata: { Kind: 'Photo' }, sourceCreatedTime: 5 });
    await h.post('/files', { externalId: 'm-3', name: 'notes.txt', directory: '/office', geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [10, 20] } } });
  });

  const names = async (body: object) => {
    const res = await h.post('/files/list', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.items as Array<{ name: string }>).map((f) => f.name).sort();
  };

  it('filters by name, directory prefix, mime type, metadata, source, data set, assets, labels, times and geography', async () => {
    expect(await names({ filter: { name: 'notes.txt' } })).toEqual(['notes.txt']);
    expect(await names({ filter: { directoryPrefix: '/plant' } })).toEqual(['pump drawing.pdf', 'valve photo.jpg']);
    expect(await names({ filter: { mimeType: 'image/jpeg' } })).toEqual(['valve photo.jpg']);
    expect(await names({ filter: { metadata: { kind: 'photo' } } })).toEqual(['valve photo.jpg']);
    expect(await names({ filter: { source: 'cad', dataSetIds: [{ externalId: 'files-ds' }] } })).toEqual(['pump drawing.pdf']);
    expect(await names({ filter: { assetIds: [asset] } })).toEqual(['pump drawing.pdf']);
    expect(await names({ filter: { assetSubtreeIds: [{ externalId: 'files-root' }] } })).toEqual(['pump drawing.pdf']);
    expect(await names({ filter: { rootAssetIds: [{ id: asset }] } })).toEqual(['pump drawing.pdf']);
    expect(await names({ filter: { labels: { containsAny: [{ externalId: 'drawing' }] } } })).toEqual(['pump drawing.pdf']);
    expect(await names({ filter: { sourceCreatedTime: { max: 10 } } })).toEqual(['valve photo.jpg']);
    expect(await names({ filter: { externalIdPrefix: 'm-', uploaded: false, geoLocation: { relation: 'INTERSECTS', shape: { type: 'Polygon', coordinates: [[[0, 0], [30, 0], [30, 30], [0, 30], [0, 0]]] } } } })).toEqual(['notes.txt']);
    const query = await h.get(`/files?directoryPrefix=x&mimeType=application/pdf`);
    expect(errorMessage(query, 400)).toMatch(/directoryPrefix/);
    const byQuery = await h.get(`/files?mimeType=application/pdf&assetIds=[${asset}]`);
    expect(byQuery.body.items.map((f: { name: string }) => f.name)).toEqual(['pump drawing.pdf']);
  });

  it('refuses a name or mime type over 256 characters, in a create and in a filter', async () => {
    expect(errorMessage(await h.post('/files', { name: 'n'.repeat(257) }), 400)).toMatch(/name/);
    expect(errorMessage(await h.post('/files', { name: 'ok', mimeType: 'm'.repeat(257) }), 400)).toMatch(/mimeType/);
    expect(errorMessage(await h.post('/files/list', { filter: { name: 'n'.repeat(257) } }), 400)).toMatch(/filter\.name/);
    expect((await h.post('/files', { name: 'n'.repeat(256), mimeType: 'm'.repeat(256) })).status).toBe(201);
  });

  it('searches names, counts, retrieves by ids and pages with partitions', async () => {
    const found = await h.post('/files/search', { search: { name: 'pump' } });
    expect(found.body.items.map((f: { name: string }) => f.name)).toEqual(['pump drawing.pdf']);
    const count = await h.post('/files/aggregate', { filter: { directoryPrefix: '/plant' } });
    expect(count.body).toEqual({ items: [{ count: 2 }] });
    const byIds = await h.post('/files/byids', { items: [{ externalId: 'm-2' }, { externalId: 'gone' }], ignoreUnknownIds: true });
    expect(byIds.body.items.map((f: { externalId: string }) => f.externalId)).toEqual(['m-2']);
    const missing = await h.post('/files/byids', { items: [{ externalId: 'gone' }] });
    expect(errorMessage(missing, 400)).toMatch(/not found/);
    expect(missing.body.error.missing).toEqual([{ externalId: 'gone' }]);
    const all = (await h.post('/files/list', { limit: 1000 })).body.items.map((f: { id: number }) => f.id).sort();
    const parts = await Promise.all([1, 2, 3].map((m) => h.post('/files/list', { partition: `${m}/3`, limit: 1000 })));
    expect(parts.flatMap((p) => p.body.items.map((f: { id: number }) => f.id)).sort()).toEqual(all);
  });

  it('updates fields, labels and metadata, but not the name', async () => {
    const res = await h.post('/files/update', {
      items: [{ externalId: 'm-1', update: { source: { set: 'cad2' }, labels: { add: [{ externalId: 'red' }], remove: [{ externalId: 'drawing' }] }, metadata: { add: { a: 'b' } }, assetIds: { setNull: true } } }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const ok = await h.post('/files/update', { items: [{ externalId: 'm-1', update: { source: { set: 'cad2' }, labels: { add: [{ externalId: 'red' }], remove: [{ externalId: 'drawing' }] }, metadata: { add: { a: 'b' } } } }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.items[0]).toMatchObject({ source: 'cad2', labels: [{ externalId: 'red' }], metadata: { a: 'b' } });
    expect(await names({ filter: { labels: { containsAll: [{ externalId: 'red' }] } } })).toEqual(['pump drawing.pdf']);
    const again = await h.post('/files/update', { items: [{ externalId: 'm-1', update: { labels: { add: [{ externalId: 'red' }, { externalId: 'blue' }] } } }] });
    expect(again.body.items[0].labels).toEqual([{ externalId: 'red' }, { externalId: 'blue' }]);
    const rename = await h.post('/files/update', { items: [{ externalId: 'm-1', update: { name: { set: 'x' } } }] });
    expect(errorMessage(rename, 400)).toMatch(/items\[0\]\.update\.name: .*overwrite/);
  });
});

describe('delete', () => {
  it('deletes a file with its content, and its links stop working', async () => {
    const f = await createFile({ externalId: 'del-1', name: 'd.txt' });
    await link('PUT', f.uploadUrl, 'bye');
    const url = await downloadUrl({ id: f.id });
    const multi = (await h.post('/files/multiuploadlink?parts=2', { items: [{ id: f.id }] })).body.items[0];
    await link('PUT', multi.uploadUrls[0], 'part');
    const blobs = h.strata.services.blobs!;
    const keys = await h.strata.store.all<{ key: string }>(
      sql`SELECT blob_key AS key FROM files WHERE id = ${f.id} UNION ALL SELECT blob_key AS key FROM file_upload_parts WHERE upload IN (SELECT id FROM file_uploads WHERE file_id = ${f.id})`,
    );
    expect(keys).toHaveLength(2);
    const projectId = (await h.strata.store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
    expect((await h.post('/files/delete', { items: [{ externalId: 'del-1' }] })).status).toBe(200);
    for (const { key } of keys) expect(await blobs.head(projectId, key), key).toBeUndefined();
    expect(errorMessage(await link('GET', url), 410)).toMatch(/deleted/);
    expect(errorMessage(await link('PUT', multi.uploadUrls[1], 'late'), 410)).toMatch(/deleted/);
    expect((await h.post('/files/delete', { items: [{ externalId: 'del-1' }] })).status).toBe(400);
    expect((await h.post('/files/delete', { items: [{ externalId: 'del-1' }], ignoreUnknownIds: true })).status).toBe(200);
    expect(errorMessage(await h.post('/files/delete', { items: Array.from({ length: 1001 }, (_, i) => ({ id: i + 1 })) }), 400)).toMatch(/at most 1000/);
  });
});
