/**
 * Files beyond the basics: files managed as data modeling instances (a `cdf_cdm:CogniteFile` node has a file
 * bound to it, addressed by instance id, whose upload sets the node's `isUploaded` and `uploadedTime`), access
 * scoped by data set (links included), and icons of image files.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let now = Date.UTC(2025, 5, 1);
const CLIENTS = [{ clientId: 'scoped', clientSecret: 'scoped-secret', groups: ['files-a'] }];
let scoped: Record<string, string>;
let dsA: number;
let dsB: number;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) }, { now: () => now });
  await ok('/models/spaces', { items: [{ space: 'docs' }] });
  [dsA, dsB] = (await ok('/datasets', { items: [{ externalId: 'fa' }, { externalId: 'fb' }] })).items.map((d: { id: number }) => d.id);
  await createGroup(h, { name: 'Files in A', sourceId: 'files-a', capabilities: [capability('filesAcl', ['READ', 'WRITE'], { datasetScope: { ids: [dsA] } })] });
  scoped = bearer(await clientToken(h, 'scoped', 'scoped-secret'));
});
afterAll(() => h?.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

async function put(url: string, body: Buffer | string) {
  const { pathname, search } = new URL(url);
  return h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: body });
}

async function get(url: string) {
  const { pathname, search } = new URL(url);
  return h.strata.app.inject({ method: 'GET', url: pathname + search });
}

const fileNode = (externalId: string, properties: Record<string, unknown>) => ({
  instanceType: 'node',
  space: 'docs',
  externalId,
  sources: [{ source: { type: 'view', space: 'cdf_cdm', externalId: 'CogniteFile', version: 'v1' }, properties }],
});
const instanceId = (externalId: string) => ({ instanceId: { space: 'docs', externalId } });

async function nodeProperties(externalId: string) {
  const res = await ok('/models/instances/byids', {
    items: [{ instanceType: 'node', space: 'docs', externalId }],
    sources: [{ source: { type: 'view', space: 'cdf_cdm', externalId: 'CogniteFile', version: 'v1' } }],
  });
  return { version: res.items[0].version, ...res.items[0].properties.cdf_cdm['CogniteFile/v1'] };
}

describe('a CogniteFile node', () => {
  it('has a file bound to it, with the fields its properties give', async () => {
    await ok('/models/instances', { items: [fileNode('manual', { name: 'Pump manual', directory: '/manuals', mimeType: 'text/plain', sourceCreatedTime: '2024-01-02T00:00:00.000Z' }), fileNode('nameless', {})] });
    const res = await ok('/files/byids', { items: [instanceId('manual'), instanceId('nameless')] });
    expect(res.items[0]).toMatchObject({ ...instanceId('manual'), name: 'Pump manual', directory: '/manuals', mimeType: 'text/plain', sourceCreatedTime: Date.UTC(2024, 0, 2), uploaded: false });
    expect(res.items[1]).toMatchObject({ ...instanceId('nameless'), name: 'nameless', uploaded: false });
    await ok('/models/instances', { items: [fileNode('manual', { name: 'Pump manual v2' })] });
    expect((await ok('/files/byids', { items: [instanceId('manual')] })).items[0].name).toBe('Pump manual v2');
  });

  it('takes content by instance id, which sets isUploaded and uploadedTime on the node', async () => {
    expect(await nodeProperties('manual')).toMatchObject({ isUploaded: false });
    const refused = await h.post('/files/downloadlink', { items: [instanceId('manual')] });
    expect(errorMessage(refused, 400)).toMatch(/Files not uploaded/);
    const link = (await ok('/files/uploadlink', { items: [instanceId('manual')] })).items[0];
    expect(link).toMatchObject({ ...instanceId('manual'), uploaded: false });
    const before = (await nodeProperties('manual')).version;
    expect((await put(link.uploadUrl, 'manual text')).statusCode).toBe(200);
    const node = await nodeProperties('manual');
    expect(node).toMatchObject({ isUploaded: true, uploadedTime: new Date(now).toISOString().replace('Z', '+00:00') });
    expect(node.version).toBe(before + 1);
    const [{ downloadUrl, ...ref }] = (await ok('/files/downloadlink', { items: [instanceId('manual')] })).items;
    expect(ref).toEqual(instanceId('manual'));
    expect((await get(downloadUrl)).body).toBe('manual text');
  });

  it('refuses updates of the fields data modeling manages, and takes the others by instance id', async () => {
    const res = await h.post('/files/update', { items: [{ ...instanceId('manual'), update: { mimeType: { set: 'x/y' } } }] });
    expect(errorMessage(res, 400)).toMatch(/mimeType is managed by data modeling/);
    const updated = await ok('/files/update', { items: [{ ...instanceId('manual'), update: { metadata: { set: { k: 'v' } } } }] });
    expect(updated.items[0]).toMatchObject({ ...instanceId('manual'), metadata: { k: 'v' } });
    expect(errorMessage(await h.post('/files/delete', { items: [{ id: updated.items[0].id }] }), 400)).toMatch(/managed by data modeling/);
  });

  it('completes a multipart upload named by instance id', async () => {
    await ok('/models/instances', { items: [fileNode('drawing', { name: 'drawing' })] });
    const { uploadId, uploadUrls } = (await ok('/files/multiuploadlink?parts=1', { items: [instanceId('drawing')] })).items[0];
    expect((await put(uploadUrls[0], 'lines')).statusCode).toBe(200);
    await ok('/files/completemultipartupload', { ...instanceId('drawing'), uploadId });
    expect(await nodeProperties('drawing')).toMatchObject({ isUploaded: true });
  });

  it('goes with its node, content and links included', async () => {
    const [{ downloadUrl }] = (await ok('/files/downloadlink', { items: [instanceId('manual')] })).items;
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'docs', externalId: 'manual' }] });
    expect(errorMessage(await h.post('/files/byids', { items: [instanceId('manual')] }), 400)).toMatch(/not found/);
    expect((await get(downloadUrl)).statusCode).toBe(410);
  });
});

describe('a principal scoped to a data set', () => {
  let inA: any;
  let inB: any;
  beforeAll(async () => {
    inA = (await h.post('/files', { externalId: 'in-a', name: 'a.txt', dataSetId: dsA })).body;
    inB = (await h.post('/files', { externalId: 'in-b', name: 'b.txt', dataSetId: dsB })).body;
    await put(inA.uploadUrl, 'a');
    await put(inB.uploadUrl, 'b');
  });

  it('sees and links only the files of its data sets; another reads as unknown', async () => {
    const list = await h.request('POST', '/files/list', { filter: { externalIdPrefix: 'in-' } }, scoped);
    expect(list.body.items.map((f: { externalId: string }) => f.externalId)).toEqual(['in-a']);
    const mine = await h.request('POST', '/files/downloadlink', { items: [{ externalId: 'in-a' }] }, scoped);
    expect(mine.status).toBe(200);
    const other = await h.request('POST', '/files/downloadlink', { items: [{ externalId: 'in-b' }] }, scoped);
    const unknown = await h.request('POST', '/files/downloadlink', { items: [{ externalId: 'no-such-file' }] }, scoped);
    expect(errorMessage(other, 400)).toBe(errorMessage(unknown, 400).replace('no-such-file', 'in-b'));
    expect((await h.request('POST', '/files/uploadlink', { items: [{ externalId: 'in-b' }] }, scoped)).status).toBe(400);
    expect((await h.request('GET', `/files/icon?id=${inB.id}`, undefined, scoped)).status).toBe(400);
  });

  it('creates files only in its data sets', async () => {
    const outside = await h.request('POST', '/files', { name: 'x', dataSetId: dsB }, scoped);
    expect(errorMessage(outside, 403)).toMatch(/filesAcl/);
    expect((await h.request('POST', '/files', { name: 'x', dataSetId: dsA }, scoped)).status).toBe(201);
  });
});

describe('icons', () => {
  it('makes a PNG of at most 256 pixels a side of an image file', async () => {
    const image = await sharp({ create: { width: 800, height: 400, channels: 3, background: { r: 200, g: 10, b: 10 } } }).jpeg().toBuffer();
    const f = (await h.post('/files', { externalId: 'photo', name: 'photo.jpg', mimeType: 'image/jpeg' })).body;
    await put(f.uploadUrl, image);
    const res = await h.strata.app.inject({ method: 'GET', url: `${h.base}/files/icon?externalId=photo`, headers: { authorization: `Bearer ${h.token}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 256, height: 128 });
  });

  it('refuses what it cannot render, and a request naming no file or two', async () => {
    const f = (await h.post('/files', { externalId: 'text', name: 'text.txt' })).body;
    await put(f.uploadUrl, 'not an image');
    expect(errorMessage(await h.get('/files/icon?externalId=text'), 400)).toMatch(/not an image/);
    expect(errorMessage(await h.get('/files/icon'), 400)).toMatch(/exactly one/);
    expect(errorMessage(await h.get(`/files/icon?id=${f.id}&externalId=text`), 400)).toMatch(/exactly one/);
    const pending = (await h.post('/files', { externalId: 'pending', name: 'p.png' })).body;
    expect(errorMessage(await h.get(`/files/icon?id=${pending.id}`), 400)).toMatch(/not uploaded/);
  });
});
