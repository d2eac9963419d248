/**
 * 3D over HTTP: models; revisions of uploaded files processed by the job runner (a glTF and a GLB built
 * here become node trees with names, parents, depths, subtree sizes and boxes; other content fails with a
 * log entry); the node endpoints, refused on a revision that is not Done; asset mappings; outputs, logs,
 * thumbnails and the 3D files; on both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { jobsDone } from './support/jobs.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const post = (path: string, body: unknown) => h.post(path, body);
const get = (path: string) => h.get(path);

async function ok(res: Promise<Response>, status = 200) {
  const r = await res;
  if (r.status !== status) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Uploads a file with `content`, returning its id. */
async function upload(name: string, content: Buffer | string, mimeType = 'application/octet-stream'): Promise<number> {
  const created = await ok(post('/files', { name, mimeType }), 201);
  const { pathname, search } = new URL(created.uploadUrl);
  const put = await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: content, headers: { 'content-type': mimeType } });
  expect(put.statusCode).toBe(200);
  return created.id;
}

const ACCESSOR = { componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 2, 3], bufferView: 0 };
/** A scene "Plant": Pump (moved by 10 in x) holding Impeller (scaled by 2) and Casing (turned 90° about z); Pipe (matrix, moved by 5 in z). */
const GLTF = {
  asset: { version: '2.0' },
  scene: 0,
  scenes: [{ name: 'Plant', nodes: [0, 3] }],
  nodes: [
    { name: 'Pump', children: [1, 2], translation: [10, 0, 0], extras: { PDMS: { Type: 'PUMP', Area: 'AB76' } } },
    { name: 'Impeller', mesh: 0, scale: [2, 2, 2] },
    { name: 'Casing', mesh: 0, rotation: [0, 0, Math.SQRT1_2, Math.SQRT1_2], extras: { PDMS: { Type: 'CASING', Area: 'AB77' } } },
    { name: 'Pipe', mesh: 0, matrix: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1], extras: { tag: 'P-1', weight: 12 } },
  ],
  meshes: [{ primitives: [{ attributes: { POSITION: 0 } }] }],
  accessors: [ACCESSOR],
  bufferViews: [{ buffer: 0, byteLength: 36 }],
  buffers: [{ byteLength: 36 }],
};

/** The binary container: a 12-byte header, the JSON chunk padded with spaces, a BIN chunk. */
function glb(doc: unknown): Buffer {
  let json = Buffer.from(JSON.stringify(doc));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const bin = Buffer.alloc(36);
  const chunk = (type: number, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(data.length, 0);
    head.writeUInt32LE(type, 4);
    return Buffer.concat([head, data]);
  };
  const body = Buffer.concat([chunk(0x4e4f534a, json), chunk(0x004e4942, bin)]);
  const header = Buffer.alloc(12);
  header.write('glTF', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + body.length, 8);
  return Buffer.concat([header, body]);
}

async function model(name: string): Promise<number> {
  return (await ok(post('/3d/models', { items: [{ name }] }), 201)).items[0].id;
}

/** A revision of `content` in model `modelId`, processed; its answer once the job has run. */
async function processed(modelId: number, content: Buffer | string, name = 'plant.gltf') {
  const fileId = await upload(name, content);
  const [revision] = (await ok(post(`/3d/models/${modelId}/revisions`, { items: [{ fileId }] }), 201)).items;
  await jobsDone(h);
  return ok(get(`/3d/models/${modelId}/revisions/${revision.id}`));
}

const close = (actual: number[], expected: number[]) => actual.forEach((v, i) => expect(v).toBeCloseTo(expected[i], 5));

describe('3D models', () => {
  it('are created, read, listed, updated and deleted', async () => {
    const created = await ok(post('/3d/models', { items: [{ name: 'Plant A', metadata: { site: 'north' } }, { name: 'Plant B' }] }), 201);
    const [a, b] = created.items;
    expect(a).toMatchObject({ name: 'Plant A', metadata: { site: 'north' }, id: expect.any(Number), createdTime: expect.any(Number) });
    expect(await ok(get(`/3d/models/${a.id}`))).toMatchObject({ id: a.id, name: 'Plant A' });
    const listed = await ok(get('/3d/models?limit=1'));
    expect(listed.items).toHaveLength(1);
    expect(listed.nextCursor).toEqual(expect.any(String));
    const updated = await ok(post('/3d/models/update', { items: [{ id: a.id, update: { name: { set: 'Plant A2' }, metadata: { add: { area: '7' } } } }] }));
    expect(updated.items[0]).toMatchObject({ name: 'Plant A2', metadata: { site: 'north', area: '7' } });
    expect(await ok(post('/3d/models/delete', { items: [{ id: b.id }] }))).toEqual({});
    expect((await get(`/3d/models/${b.id}`)).status).toBe(400);
  });

  it('refuse bad input, naming it, and change nothing', async () => {
    expect(errorMessage(await post('/3d/models', { items: [{ name: 'ok' }, { name: '' }] }), 400)).toMatch(/items\[1\]\.name/);
    expect(errorMessage(await post('/3d/models', { items: [{ name: 'x', dataSetId: 123456789 }] }), 400)).toMatch(/data set|dataSetId|missing/i);
    expect((await ok(get('/3d/models?limit=1000'))).items.map((m: { name: string }) => m.name)).not.toContain('ok');
    const missing = await post('/3d/models/delete', { items: [{ id: 424242 }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.missing).toEqual([{ id: 424242 }]);
  });

  it('list only those with a published revision, or without, when asked', async () => {
    const published = await model('published model');
    const fileId = await upload('p.gltf', JSON.stringify(GLTF));
    await ok(post(`/3d/models/${published}/revisions`, { items: [{ fileId, published: true }] }), 201);
    await jobsDone(h);
    const ids = async (q: string) => (await ok(get(`/3d/models?limit=1000&${q}`))).items.map((m: { id: number }) => m.id);
    expect(await ids('published=true')).toContain(published);
    expect(await ids('published=false')).not.toContain(published);
  });

  it('give their latest revision with includeRevisionInfo', async () => {
    const modelId = await model('with revisions');
    await processed(modelId, 'not glTF');
    const latest = await processed(modelId, JSON.stringify(GLTF));
    const found = (await ok(get('/3d/models?limit=1000&includeRevisionInfo=true'))).items.find((m: { id: number }) => m.id === modelId);
    expect(found.lastRevisionInfo).toEqual({ status: 'Done', revisionId: latest.id, createdTime: latest.createdTime, revisionCount: 2, types: ['gltf-directory:1'] });
    const plain = (await ok(get('/3d/models?limit=1000'))).items.find((m: { id: number }) => m.id === modelId);
    expect(plain).not.toHaveProperty('lastRevisionInfo');
  });
});

describe('3D revisions of a glTF file', () => {
  let modelId: number;
  let revision: { id: number; status: string; fileId: number };
  let nodes: any[];
  const base = () => `/3d/models/${modelId}/revisions/${revision.id}`;

  beforeAll(async () => {
    modelId = await model('glTF model');
    revision = await processed(modelId, JSON.stringify(GLTF));
  });

  it('are processed to Done, with the node tree in tree order', async () => {
    expect(revision).toMatchObject({ status: 'Done', published: false, assetMappingCount: 0 });
    expect(revision).not.toHaveProperty('rotation');
    nodes = (await ok(get(`${base()}/nodes`))).items;
    expect(nodes.map((n) => [n.treeIndex, n.name, n.depth, n.subtreeSize])).toEqual([
      [0, 'Plant', 0, 5],
      [1, 'Pump', 1, 3],
      [2, 'Impeller', 2, 1],
      [3, 'Casing', 2, 1],
      [4, 'Pipe', 1, 1],
    ]);
    const [root, pump, impeller, casing, pipe] = nodes;
    expect(root.parentId).toBeUndefined();
    expect([pump.parentId, impeller.parentId, casing.parentId, pipe.parentId]).toEqual([root.id, pump.id, pump.id, root.id]);
    expect(pump.properties).toEqual({ PDMS: { Type: 'PUMP', Area: 'AB76' } });
    expect(pipe.properties).toEqual({ extras: { tag: 'P-1', weight: '12' } });
  });

  it('give each node the bounding box of its subtree, through the node transforms', () => {
    const box = (name: string) => nodes.find((n) => n.name === name).boundingBox;
    close(box('Impeller').min, [10, 0, 0]);
    close(box('Impeller').max, [12, 4, 6]);
    close(box('Casing').min, [8, 0, 0]);
    close(box('Casing').max, [10, 1, 3]);
    close(box('Pump').min, [8, 0, 0]);
    close(box('Pump').max, [12, 4, 6]);
    close(box('Pipe').min, [0, 0, 5]);
    close(box('Pipe').max, [1, 2, 8]);
    close(box('Plant').min, [0, 0, 0]);
    close(box('Plant').max, [12, 4, 8]);
  });

  it('list a subtree to a depth, and by properties', async () => {
    const pump = nodes[1];
    const names = async (q: string) => (await ok(get(`${base()}/nodes?${q}`))).items.map((n: { name: string }) => n.name);
    expect(await names(`nodeId=${pump.id}`)).toEqual(['Pump', 'Impeller', 'Casing']);
    expect(await names(`nodeId=${pump.id}&depth=0`)).toEqual(['Pump']);
    expect(await names('depth=1')).toEqual(['Plant', 'Pump', 'Pipe']);
    expect(await names(`properties=${encodeURIComponent(JSON.stringify({ PDMS: { Area: 'AB77' } }))}`)).toEqual(['Casing']);
    expect(await names(`properties=${encodeURIComponent(JSON.stringify({ PDMS: { Area: 'AB77', Type: 'PUMP' } }))}`)).toEqual([]);
    expect(errorMessage(await get(`${base()}/nodes?properties=${encodeURIComponent('{"PDMS":"x"}')}`), 400)).toMatch(/query\.properties/);
    expect(errorMessage(await get(`${base()}/nodes?partition=1/2`), 400)).toMatch(/sortByNodeId/);
  });

  it('page with cursors, and split into partitions by node id', async () => {
    const first = await ok(get(`${base()}/nodes?limit=2`));
    const second = await ok(get(`${base()}/nodes?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`));
    expect([...first.items, ...second.items].map((n: { treeIndex: number }) => n.treeIndex)).toEqual([0, 1, 2, 3]);
    const parts = await Promise.all(['1/2', '2/2'].map(async (p) => (await ok(get(`${base()}/nodes?sortByNodeId=true&partition=${p}&limit=1000`))).items));
    expect(parts.flat().map((n: { id: number }) => n.id).sort()).toEqual(nodes.map((n) => n.id).sort());
  });

  it('filter by names and properties, read by ids, and give ancestors', async () => {
    const filtered = await ok(post(`${base()}/nodes/list`, { filter: { properties: { PDMS: { Type: ['PUMP', 'CASING'] } } } }));
    expect(filtered.items.map((n: { name: string }) => n.name)).toEqual(['Pump', 'Casing']);
    expect((await ok(post(`${base()}/nodes/list`, { filter: { names: ['Pipe', 'Nothing'] } }))).items.map((n: { name: string }) => n.name)).toEqual(['Pipe']);
    expect((await ok(post(`${base()}/nodes/list`, { filter: { names: [] } }))).items).toEqual([]);
    expect((await ok(post(`${base()}/nodes/list`, {}))).items).toHaveLength(5);
    const byIds = await ok(post(`${base()}/nodes/byids`, { items: [{ id: nodes[3].id }, { id: nodes[0].id }] }));
    expect(byIds.items).toEqual([nodes[3], nodes[0]]);
    const missing = await post(`${base()}/nodes/byids`, { items: [{ id: 77 }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.missing).toEqual([{ id: 77 }]);
    const ancestors = await ok(get(`${base()}/nodes/${nodes[3].id}/ancestors`));
    expect(ancestors.items.map((n: { name: string }) => n.name)).toEqual(['Plant', 'Pump', 'Casing']);
  });

  it('map nodes to assets, list, filter and delete the mappings, and count them', async () => {
    const [, pump, , casing] = nodes;
    const created = await ok(post(`${base()}/mappings`, { items: [{ nodeId: pump.id, assetId: 11 }, { nodeId: casing.id, assetId: 12 }, { nodeId: casing.id, assetId: 11 }] }), 201);
    expect(created.items[0]).toEqual({ nodeId: pump.id, assetId: 11, treeIndex: 1, subtreeSize: 3 });
    // Made again, a mapping is answered as it is.
    await ok(post(`${base()}/mappings`, { items: [{ nodeId: pump.id, assetId: 11 }] }), 201);
    expect((await ok(get(base()))).assetMappingCount).toBe(3);
    const list = async (q: string) => (await ok(get(`${base()}/mappings?${q}`))).items.map((m: { nodeId: number; assetId: number }) => [m.nodeId, m.assetId]);
    expect(await list('assetId=11')).toEqual([[pump.id, 11], [casing.id, 11]]);
    expect(await list(`nodeId=${casing.id}`)).toEqual([[casing.id, 12], [casing.id, 11]]);
    expect(await list(`intersectsBoundingBox=${encodeURIComponent(JSON.stringify({ min: [11, 3, 0], max: [20, 20, 20] }))}`)).toEqual([[pump.id, 11], [casing.id, 11]]);
    expect(errorMessage(await get(`${base()}/mappings?intersectsBoundingBox=${encodeURIComponent('{"min":[],"max":[]}')}`), 400)).toMatch(/length 3/);
    expect(errorMessage(await get(`${base()}/mappings?assetId=1&nodeId=2`), 400)).toMatch(/one of/);
    const filtered = await ok(post(`${base()}/mappings/list`, { filter: { treeIndexes: [3] } }));
    expect(filtered.items.map((m: { assetId: number }) => m.assetId)).toEqual([12, 11]);
    expect((await ok(post(`${base()}/mappings/list`, { filter: { nodeIds: [] } }))).items).toEqual([]);
    const across = await ok(get('/3d/mappings/11/modelnodes?limit=1'));
    expect(across.items).toEqual([{ modelId, revisionId: revision.id, nodeId: pump.id }]);
    expect((await ok(get(`/3d/mappings/11/modelnodes?cursor=${across.nextCursor}`))).items).toEqual([{ modelId, revisionId: revision.id, nodeId: casing.id }]);
    expect(errorMessage(await post(`${base()}/mappings`, { items: [{ nodeId: 999, assetId: 1 }] }), 400)).toMatch(/items\[0\]\.nodeId: the revision \d+ has no node 999/);
    const gone = await post(`${base()}/mappings/delete`, { items: [{ nodeId: pump.id, assetId: 11 }, { nodeId: pump.id, assetId: 99 }] });
    expect(gone.status).toBe(400);
    expect(gone.body.error.missing).toEqual([{ nodeId: pump.id, assetId: 99 }]);
    await ok(post(`${base()}/mappings/delete`, { items: [{ nodeId: pump.id, assetId: 11 }] }));
    expect(await list('assetId=11')).toEqual([[casing.id, 11]]);
    expect((await ok(get(base()))).assetMappingCount).toBe(2);
  });

  it('keep the file as an output served under /3d/files, and log what processing did', async () => {
    const outputs = (await ok(get(`${base()}/outputs`))).items;
    expect(outputs).toEqual([{ format: 'gltf-directory', version: 1, blobId: expect.any(Number) }]);
    expect((await ok(get(`${base()}/outputs?format=ept-pointcloud`))).items).toEqual([]);
    const scene = await get(`/3d/files/${outputs[0].blobId}/scene.gltf`);
    expect(scene.status).toBe(200);
    expect(scene.body).toEqual(GLTF);
    expect((await ok(get(`/3d/files/${outputs[0].blobId}/scene.json`))).files).toEqual(['scene.gltf']);
    expect(errorMessage(await get(`/3d/files/${outputs[0].blobId}`), 400)).toMatch(/directory/);
    expect(errorMessage(await get(`/3d/files/${outputs[0].blobId}/other.bin`), 400)).toMatch(/no file "other\.bin"/);
    expect((await ok(get(`${base()}/logs`))).items).toEqual([]);
    expect((await ok(get(`${base()}/logs?severity=0`))).items).toEqual([{ timestamp: expect.any(Number), severity: 3, type: 'CONVERTER/DONE', info: expect.stringMatching(/5 nodes/) }]);
  });

  it('set a PNG or JPEG file as the thumbnail, and refuse other files', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest of a png')]);
    const fileId = await upload('thumb.png', png, 'image/png');
    expect(await ok(post(`${base()}/thumbnail`, { fileId }))).toEqual({});
    const updated = await ok(get(base()));
    expect(updated.thumbnailThreedFileId).toEqual(expect.any(Number));
    expect(updated.thumbnailURL).toBe(`${h.strata.services.publicUrl}${h.base}/3d/files/${updated.thumbnailThreedFileId}`);
    expect(updated.thumbnailURL).toMatch(/^http:\/\/localhost:\d+\/api\/v1\/projects\/dev\/3d\/files\/\d+$/);
    const served = await h.strata.app.inject({ method: 'GET', url: `${h.base}/3d/files/${updated.thumbnailThreedFileId}`, headers: { authorization: `Bearer ${h.token}` } });
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.rawPayload.equals(png)).toBe(true);
    const text = await upload('notes.txt', 'not an image', 'text/plain');
    expect(errorMessage(await post(`${base()}/thumbnail`, { fileId: text }), 400)).toMatch(/fileId: the file is not a JPEG or PNG/);
    expect((await ok(get(base()))).thumbnailThreedFileId).toBe(updated.thumbnailThreedFileId);
  });

  it('are updated, listed by published, and refuse a change of fileId', async () => {
    const update = { rotation: { set: [0, 1, 0] }, camera: { set: { target: [1, 2, 3], position: [3, 2, 1] } }, published: { set: true }, metadata: { set: { k: 'v' } } };
    const [updated] = (await ok(post(`/3d/models/${modelId}/revisions/update`, { items: [{ id: revision.id, update }] }))).items;
    expect(updated).toMatchObject({ rotation: [0, 1, 0], camera: { target: [1, 2, 3], position: [3, 2, 1] }, published: true, metadata: { k: 'v' }, status: 'Done' });
    expect((await ok(get(`/3d/models/${modelId}/revisions?published=true`))).items.map((r: { id: number }) => r.id)).toEqual([revision.id]);
    expect((await ok(get(`/3d/models/${modelId}/revisions?published=false`))).items).toEqual([]);
    expect(errorMessage(await post(`/3d/models/${modelId}/revisions/update`, { items: [{ id: revision.id, update: { fileId: { set: 1 } } }] }), 400)).toMatch(/fileId/);
    expect(errorMessage(await post(`/3d/models/${modelId}/revisions/update`, { items: [{ id: revision.id, update: { rotation: { set: [1, 2] } } }] }), 400)).toMatch(/rotation/);
  });
});

describe('3D revisions of other content', () => {
  it('read a binary glTF (.glb) into the same tree', async () => {
    const modelId = await model('GLB model');
    const revision = await processed(modelId, glb(GLTF), 'plant.glb');
    expect(revision.status).toBe('Done');
    const nodes = (await ok(get(`/3d/models/${modelId}/revisions/${revision.id}/nodes`))).items;
    expect(nodes.map((n: { name: string; subtreeSize: number }) => [n.name, n.subtreeSize])).toEqual([['Plant', 5], ['Pump', 3], ['Impeller', 1], ['Casing', 1], ['Pipe', 1]]);
    const [output] = (await ok(get(`/3d/models/${modelId}/revisions/${revision.id}/outputs`))).items;
    const served = await h.strata.app.inject({ method: 'GET', url: `${h.base}/3d/files/${output.blobId}/scene.glb`, headers: { authorization: `Bearer ${h.token}` } });
    expect(served.rawPayload.equals(glb(GLTF))).toBe(true);
  });

  it('name the root after the scene, or RootNode, and read the nodes no node lists when there is no scene', async () => {
    const modelId = await model('sceneless');
    const revision = await processed(modelId, JSON.stringify({ asset: { version: '2.0' }, nodes: [{ name: 'A', children: [1] }, { name: 'B' }, {}] }));
    const nodes = (await ok(get(`/3d/models/${modelId}/revisions/${revision.id}/nodes`))).items;
    expect(nodes.map((n: { name: string; depth: number; boundingBox?: unknown }) => [n.name, n.depth, n.boundingBox ?? null])).toEqual([
      ['RootNode', 0, null],
      ['A', 1, null],
      ['B', 2, null],
      ['Node 2', 1, null],
    ]);
  });

  it.each([
    ['a text file', 'just some text', /not a glTF file/],
    ['glTF JSON that does not parse', '{"asset": {"version": "2.0"}, "nodes": [', /does not parse/],
    ['glTF of version 1', JSON.stringify({ asset: { version: '1.0' } }), /only version 2/],
    ['a node reached twice', JSON.stringify({ asset: { version: '2.0' }, scenes: [{ nodes: [0, 1] }], nodes: [{ children: [1] }, {}] }), /nodes\[1\]: the node is reached twice/],
    ['a POSITION accessor without min and max', JSON.stringify({ ...GLTF, accessors: [{ count: 3, type: 'VEC3' }] }), /accessors\[0\]: a POSITION accessor must give min and max/],
  ])('fail for %s, with the reason in the logs, and the node endpoints answer 400', async (_, content, reason) => {
    const modelId = await model('failing');
    const revision = await processed(modelId, content, 'source.bin');
    expect(revision.status).toBe('Failed');
    const base = `/3d/models/${modelId}/revisions/${revision.id}`;
    const [entry] = (await ok(get(`${base}/logs`))).items;
    expect(entry).toMatchObject({ severity: 7, type: 'CONVERTER/FAILED' });
    expect(entry.info).toMatch(reason);
    expect((await ok(get(`${base}/outputs`))).items).toEqual([]);
    for (const res of [get(`${base}/nodes`), post(`${base}/nodes/list`, {}), post(`${base}/nodes/byids`, { items: [{ id: 1 }] }), get(`${base}/nodes/1/ancestors`)]) {
      expect(errorMessage(await res, 400)).toMatch(/Processing of the revision \d+ failed/);
    }
    expect(errorMessage(await post(`${base}/mappings`, { items: [{ nodeId: 1, assetId: 1 }] }), 400)).toMatch(/failed/);
  });

  it('fail once every attempt to read the file has failed, rather than staying Processing', async () => {
    const modelId = await model('unreadable');
    const blobs = h.strata.services.blobs!;
    // Making the revision reads only the file's size; processing reads its content.
    const read = blobs.get.bind(blobs);
    blobs.get = async () => {
      throw new Error('the blob store is unreachable');
    };
    try {
      const revision = await processed(modelId, JSON.stringify(GLTF));
      expect(revision.status).toBe('Failed');
      const [entry] = (await ok(get(`/3d/models/${modelId}/revisions/${revision.id}/logs`))).items;
      expect(entry.info).toMatch(/stopped after 3 attempts: the blob store is unreachable/);
    } finally {
      blobs.get = read;
    }
  });

  it('refuse a file that was never uploaded, or does not exist, and create no revision', async () => {
    const modelId = await model('no file');
    const empty = (await ok(post('/files', { name: 'empty.gltf' }), 201)).id;
    expect(errorMessage(await post(`/3d/models/${modelId}/revisions`, { items: [{ fileId: empty }] }), 400)).toMatch(/not uploaded/);
    expect((await post(`/3d/models/${modelId}/revisions`, { items: [{ fileId: 987654 }] })).status).toBe(400);
    expect(errorMessage(await post('/3d/models/1234/revisions', { items: [{ fileId: empty }] }), 400)).toMatch(/3D model \{"id":1234\} does not exist/);
    expect((await ok(get(`/3d/models/${modelId}/revisions`))).items).toEqual([]);
  });

  it('are reached only under their own model, and nodes only under their own revision', async () => {
    const a = await model('model a');
    const b = await model('model b');
    const ra = await processed(a, JSON.stringify(GLTF));
    const rb = await processed(b, JSON.stringify(GLTF));
    expect((await get(`/3d/models/${b}/revisions/${ra.id}`)).status).toBe(400);
    expect((await get(`/3d/models/${b}/revisions/${ra.id}/nodes`)).status).toBe(400);
    expect((await post(`/3d/models/${b}/revisions/update`, { items: [{ id: ra.id, update: { published: { set: true } } }] })).status).toBe(400);
    const [nodeOfA] = (await ok(get(`/3d/models/${a}/revisions/${ra.id}/nodes?limit=1`))).items;
    const other = `/3d/models/${b}/revisions/${rb.id}`;
    expect((await get(`${other}/nodes?nodeId=${nodeOfA.id}`)).body.error.missing).toEqual([{ id: nodeOfA.id }]);
    expect((await get(`${other}/nodes/${nodeOfA.id}/ancestors`)).status).toBe(400);
    expect((await post(`${other}/nodes/byids`, { items: [{ id: nodeOfA.id }] })).status).toBe(400);
    expect((await post(`${other}/mappings`, { items: [{ nodeId: nodeOfA.id, assetId: 1 }] })).status).toBe(400);
    expect((await ok(get(`/3d/models/${a}/revisions/${ra.id}`))).published).toBe(false);
  });

  it('are deleted with what they hold, and with their model', async () => {
    const modelId = await model('to delete');
    const revision = await processed(modelId, JSON.stringify(GLTF));
    const base = `/3d/models/${modelId}/revisions/${revision.id}`;
    const [output] = (await ok(get(`${base}/outputs`))).items;
    const second = await processed(modelId, JSON.stringify(GLTF));
    await ok(post(`/3d/models/${modelId}/revisions/delete`, { items: [{ id: revision.id }] }));
    expect((await get(base)).status).toBe(400);
    expect((await get(`/3d/files/${output.blobId}/scene.gltf`)).status).toBe(400);
    await ok(post('/3d/models/delete', { items: [{ id: modelId }] }));
    expect((await get(`/3d/models/${modelId}/revisions/${second.id}`)).status).toBe(400);
  });
});

describe('3D nodes of a data modeling CAD revision', () => {
  it('are those named whose boxes intersect the box, for a revision of the model named', async () => {
    const modelId = await model('cad model');
    const revision = await processed(modelId, JSON.stringify(GLTF));
    const nodes = (await ok(get(`/3d/models/${modelId}/revisions/${revision.id}/nodes`))).items;
    await ok(post('/models/spaces', { items: [{ space: 'cad' }] }));
    const view = (externalId: string) => ({ type: 'view', space: 'cdf_cdm', externalId, version: 'v1' });
    await ok(
      post('/models/instances', {
        items: [
          { instanceType: 'node', space: 'cad', externalId: 'plant', sources: [{ source: view('CogniteCADModel'), properties: { name: 'Plant', type: 'CAD' } }] },
          { instanceType: 'node', space: 'cad', externalId: 'plant-r1', sources: [
              { source: view('CogniteCADRevision'), properties: { revisionId: revision.id, model3D: { space: 'cad', externalId: 'plant' }, type: 'CAD', status: 'Done', published: true } },
              // The view's filter, in Strata's core model, reads `type` of the Cognite3DModel container.
              { source: view('CogniteCADModel'), properties: { name: 'Plant r1', type: 'CAD' } },
            ],
          },
        ],
      }),
    );
    const body = (box: Record<string, number>, revisionXid = 'plant-r1', modelXid = 'plant') => ({
      model: { instanceId: { space: 'cad', externalId: modelXid } },
      revision: { instanceId: { space: 'cad', externalId: revisionXid } },
      filterNodesByBoundingBox: { boundingBox: box, nodeIds: nodes.map((n: { id: number }) => n.id) },
    });
    // Impeller spans x 10..12, Casing 8..10, Pipe 0..1 (z 5..8).
    const found = await ok(post('/3d/nodes/list', body({ xMin: 10.5, xMax: 11, yMin: 0, yMax: 1, zMin: 0, zMax: 1 })));
    expect(found.items.map((n: { name: string }) => n.name)).toEqual(['Plant', 'Pump', 'Impeller']);
    expect(found.items[2]).toEqual({ id: nodes[2].id, treeIndex: 2, depth: 2, name: 'Impeller', subtreeSize: 1, boundingBox: nodes[2].boundingBox });
    expect((await ok(post('/3d/nodes/list', body({ xMin: 100, xMax: 101, yMin: 0, yMax: 1, zMin: 0, zMax: 1 })))).items).toEqual([]);
    expect(errorMessage(await post('/3d/nodes/list', body({ xMin: 0, xMax: 1, yMin: 0, yMax: 1, zMin: 0, zMax: 1 }, 'plant-r1', 'other')), 400)).toMatch(/is not a revision of the model/);
    expect(errorMessage(await post('/3d/nodes/list', body({ xMin: 0, xMax: 1, yMin: 0, yMax: 1, zMin: 0, zMax: 1 }, 'nothing')), 400)).toMatch(/revision\.instanceId: the CAD revision .* does not exist/);
  });
});

describe('3D jobs over data modeling sources', () => {
  const nonce = async () => (await ok(post('/sessions', { items: [{ tokenExchange: true }] }))).items[0].nonce as string;
  const job = (externalId: string, extra: Record<string, unknown> = {}) => ({
    space: 'threed_jobs',
    externalId,
    name: `job ${externalId}`,
    type: 'ImageTextDetection',
    source: { type: 'Cognite360ImageCollection', instanceId: { space: 'images', externalId: 'collection-1' } },
    configuration: {},
    ...extra,
  });

  it('are created with a session nonce, listed in pages and deleted', async () => {
    const [created] = (await ok(post('/3d/jobs', { items: [{ ...job('j1'), nonce: await nonce() }] }), 201)).items;
    expect(created).toEqual({ ...job('j1'), status: 'Failed', createdAt: expect.any(Number) });
    await ok(post('/3d/jobs', { items: [{ ...job('j2'), nonce: await nonce() }] }), 201);
    const first = await ok(post('/3d/jobs/list', { limit: 1 }));
    expect(first.items.map((j: { externalId: string }) => j.externalId)).toEqual(['j1']);
    const second = await ok(post('/3d/jobs/list', { limit: 1, cursor: first.nextCursor }));
    expect(second.items.map((j: { externalId: string }) => j.externalId)).toEqual(['j2']);
    expect(errorMessage(await post('/3d/jobs', { items: [{ ...job('j1'), nonce: await nonce() }] }), 400)).toMatch(/exist already/);
    const missing = await post('/3d/jobs/delete', { items: [{ space: 'threed_jobs', externalId: 'j2' }, { space: 'threed_jobs', externalId: 'nope' }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.missing).toEqual([{ space: 'threed_jobs', externalId: 'nope' }]);
    expect(await ok(post('/3d/jobs/delete', { items: [{ space: 'threed_jobs', externalId: 'j2' }] }))).toEqual({});
    expect((await ok(post('/3d/jobs/list', {}))).items.map((j: { externalId: string }) => j.externalId)).toEqual(['j1']);
  });

  it('refuse a nonce that is not a session, a job type or source the reference does not name, and create nothing', async () => {
    const refused = await post('/3d/jobs', { items: [{ ...job('bad'), nonce: 'not-a-nonce' }] });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/nonce: not a nonce of a session/);
    expect(errorMessage(await post('/3d/jobs', { items: [{ ...job('bad', { type: 'Other' }), nonce: await nonce() }] }), 400)).toMatch(/items\/0\/type|items\[0\]\.type/);
    expect(errorMessage(await post('/3d/jobs', { items: [{ ...job('bad', { space: '1bad' }), nonce: await nonce() }] }), 400)).toMatch(/space/);
    expect((await ok(post('/3d/jobs/list', {}))).items.map((j: { externalId: string }) => j.externalId)).not.toContain('bad');
  });

  it('list no results, and keep the rejected keys of a result', async () => {
    await ok(post('/3d/jobs', { items: [{ ...job('j3'), nonce: await nonce() }] }), 201);
    const ref = { space: 'threed_jobs', externalId: 'j3' };
    const result = { instanceId: { space: 'images', externalId: 'file-1' } };
    expect(await ok(post('/3d/job/results/list', { job: ref }))).toEqual({ items: [] });
    expect(errorMessage(await post('/3d/job/results/list', { job: { space: 'threed_jobs', externalId: 'nope' } }), 400)).toMatch(/job: the job .* does not exist/);
    await ok(post('/3d/job/result/rejections', { job: ref, result, add: ['k2', 'k1', 'k1'] }));
    await ok(post('/3d/job/result/rejections', { job: ref, result, add: ['k3'] }));
    await ok(post('/3d/job/result/rejections', { job: ref, result, remove: ['k2'] }));
    expect(await ok(post('/3d/job/result/rejections/list', { job: ref, result }))).toEqual({ items: [{ rejectedKey: 'k1' }, { rejectedKey: 'k3' }] });
    expect((await ok(post('/3d/job/result/rejections/list', { job: ref, result: { instanceId: { space: 'images', externalId: 'file-2' } } }))).items).toEqual([]);
    expect(errorMessage(await post('/3d/job/result/rejections/list', { job: ref, result, cursor: 'garbage' }), 400)).toMatch(/cursor: not a cursor/);
    await ok(post('/3d/jobs/delete', { items: [ref] }));
    expect((await post('/3d/job/result/rejections/list', { job: ref, result })).status).toBe(400);
  });
});

describe('3D revisions not yet processed', () => {
  it('answer 400 on the node endpoints, saying processing is not complete', async () => {
    await h.strata.services.jobs!.close();
    const modelId = await model('queued');
    const fileId = await upload('plant.gltf', JSON.stringify(GLTF));
    const [revision] = (await ok(post(`/3d/models/${modelId}/revisions`, { items: [{ fileId }] }), 201)).items;
    expect(revision.status).toBe('Queued');
    const base = `/3d/models/${modelId}/revisions/${revision.id}`;
    expect(errorMessage(await get(`${base}/nodes`), 400)).toMatch(/Processing of the revision \d+ is not complete \(its status is Queued\)/);
    expect(errorMessage(await post(`${base}/nodes/list`, {}), 400)).toMatch(/not complete/);
  });
});
