/**
 * 3D contextualization of data modeling projects over HTTP: CAD nodes, 360° images and point cloud volumes
 * linked to CogniteAsset instances become core model instances that the data modeling endpoints read; the
 * delete variants remove them; bad input and a caller who may not write the spaces change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { jobsDone } from './support/jobs.js';

let h: Harness;
let readOnly: Record<string, string>;
let nodes: Array<{ id: number; name: string; treeIndex: number; subtreeSize: number }>;
let revisionId: number;
let failedRevisionId: number;

const post = (path: string, body: unknown) => h.post(path, body);
const view = (externalId: string) => ({ type: 'view', space: 'cdf_cdm', externalId, version: 'v1' });
const ref = (externalId: string, space = 'plant') => ({ space, externalId });

async function ok(res: Promise<Response>, status = 200) {
  const r = await res;
  if (r.status !== status) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const GLTF = JSON.stringify({
  asset: { version: '2.0' },
  scenes: [{ name: 'Plant', nodes: [0, 1] }],
  nodes: [{ name: 'Pump', children: [2] }, { name: 'Pipe' }, { name: 'Impeller' }],
});

const node = (externalId: string, source: string, properties: Record<string, unknown>, more: Array<{ source: string; properties: Record<string, unknown> }> = []) => ({
  instanceType: 'node',
  space: 'plant',
  externalId,
  sources: [{ source: view(source), properties }, ...more.map((m) => ({ source: view(m.source), properties: m.properties }))],
});

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('ctx-reader', 'ctx-no3d', 'ctx-other3d') });
  const modelId = (await ok(post('/3d/models', { items: [{ name: 'plant' }] }), 201)).items[0].id;
  const file = (await ok(post('/files', { name: 'plant.gltf' }), 201));
  const { pathname, search } = new URL(file.uploadUrl);
  await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: GLTF });
  revisionId = (await ok(post(`/3d/models/${modelId}/revisions`, { items: [{ fileId: file.id }] }), 201)).items[0].id;
  const broken = await ok(post('/files', { name: 'broken.gltf' }), 201);
  const at = new URL(broken.uploadUrl);
  await h.strata.app.inject({ method: 'PUT', url: at.pathname + at.search, payload: 'not glTF' });
  failedRevisionId = (await ok(post(`/3d/models/${modelId}/revisions`, { items: [{ fileId: broken.id }] }), 201)).items[0].id;
  await jobsDone(h);
  nodes = (await ok(h.get(`/3d/models/${modelId}/revisions/${revisionId}/nodes`))).items;
  await ok(post('/models/spaces', { items: [{ space: 'plant' }, { space: 'objects' }, { space: 'links' }] }));
  await ok(
    post('/models/instances', {
      items: [
        node('cad', 'CogniteCADModel', { name: 'Plant', type: 'CAD' }),
        node('cad-r1', 'CogniteCADRevision', { revisionId, model3D: ref('cad'), type: 'CAD', status: 'Done', published: true }, [{ source: 'CogniteCADModel', properties: { name: 'r1', type: 'CAD' } }]),
        node('cad-bad', 'CogniteCADRevision', { revisionId: failedRevisionId, model3D: ref('cad'), type: 'CAD', status: 'Failed' }, [{ source: 'CogniteCADModel', properties: { name: 'bad', type: 'CAD' } }]),
        node('cad-r9', 'CogniteCADRevision', { revisionId: 424242, model3D: ref('cad'), type: 'CAD', status: 'Done' }, [{ source: 'CogniteCADModel', properties: { name: 'r9', type: 'CAD' } }]),
        node('pc', 'CognitePointCloudModel', { name: 'Scan', type: 'PointCloud' }),
        node('pc-r1', 'CognitePointCloudRevision', { revisionId: 1, model3D: ref('pc'), type: 'PointCloud', status: 'Done' }, [{ source: 'CognitePointCloudModel', properties: { name: 'r1', type: 'PointCloud' } }]),
        node('img', 'Cognite360ImageModel', { name: 'Walk', type: 'Image360' }),
        node('img-r1', 'Cognite360ImageCollection', { model3D: ref('img'), type: 'Image360', status: 'Done' }, [{ source: 'Cognite360ImageModel', properties: { name: 'r1', type: 'Image360' } }]),
        node('img-r2', 'Cognite360ImageCollection', { model3D: ref('img'), type: 'Image360', status: 'Done' }, [{ source: 'Cognite360ImageModel', properties: { name: 'r2', type: 'Image360' } }]),
        node('station', 'Cognite360ImageStation', { groupType: 'Station360' }),
        node('photo', 'Cognite360Image', { collection360: ref('img-r1'), station360: ref('station'), takenAt: '2026-01-01T00:00:00.000Z' }),
        node('pump', 'CogniteAsset', { name: 'Pump P-1' }),
        node('pipe', 'CogniteAsset', { name: 'Pipe L-1' }),
      ],
    }),
  );
  readOnly = bearer(
    await namedClientToken(h, 'ctx-reader', [
      capability('dataModelInstancesAcl', ['READ']),
      capability('dataModelInstancesAcl', ['WRITE'], { spaceIdScope: { spaceIds: ['objects'] } }),
      capability('dataModelsAcl', ['READ']),
    ]),
  );
});
afterAll(() => h.close());

/** The release candidate bodies name the revision `revision.instanceId`; the deprecated ones `revisionInstanceId`. */
const config = (revision: string, rc = true) => ({
  object3DSpace: 'objects',
  contextualizationSpace: 'links',
  ...(rc ? { revision: { instanceId: ref(revision) } } : { revisionInstanceId: ref(revision) }),
});

/** Every instance of the two spaces the links are written to, as `space:externalId`. */
async function written(): Promise<string[]> {
  const all: string[] = [];
  for (const instanceType of ['node', 'edge']) {
    const { items } = await ok(post('/models/instances/list', { instanceType, limit: 1000, filter: { in: { property: [instanceType, 'space'], values: ['objects', 'links'] } } }));
    all.push(...items.map((i: { space: string; externalId: string }) => `${i.space}:${i.externalId}`));
  }
  return all.sort();
}

async function read(space: string, externalId: string, source: string, instanceType = 'node') {
  const { items } = await ok(post('/models/instances/byids', { items: [{ instanceType, space, externalId }], sources: [{ source: view(source) }] }));
  return items[0]?.properties?.cdf_cdm?.[`${source}/v1`];
}

describe('CAD contextualization', () => {
  it('links a node to an asset as a CogniteCADNode showing the asset\'s 3D object, and unlinks it', async () => {
    const impeller = nodes.find((n) => n.name === 'Impeller')!;
    const body = { items: [{ asset: { instanceId: ref('pump') }, nodeId: impeller.id }], dmsContextualizationConfig: config('cad-r1') };
    expect(await ok(post('/3d/contextualization/cad', body))).toEqual({});
    const object3D = (await read('plant', 'pump', 'CogniteAsset')).object3D;
    expect(object3D.space).toBe('objects');
    const cadNode = await read('links', `cog_3d_cadnode_${impeller.id}`, 'CogniteCADNode');
    expect(cadNode).toMatchObject({
      name: 'Impeller',
      object3D,
      model3D: ref('cad'),
      revisions: [ref('cad-r1')],
      treeIndexes: [impeller.treeIndex],
      subTreeSizes: [impeller.subtreeSize],
      cadNodeReference: String(impeller.id),
    });
    // The CAD nodes of the 3D object are those whose object3D names it.
    const { items } = await ok(post('/models/instances/list', { instanceType: 'node', sources: [{ source: view('CogniteCADNode') }], filter: { equals: { property: ['cdf_cdm', 'CogniteCADNode/v1', 'object3D'], value: object3D } } }));
    expect(items.map((i: { externalId: string }) => i.externalId)).toEqual([`cog_3d_cadnode_${impeller.id}`]);

    // A second node for the same asset reuses its 3D object.
    const pump = nodes.find((n) => n.name === 'Pump')!;
    await ok(post('/3d/contextualization/cad', { ...body, items: [{ asset: { instanceId: ref('pump') }, nodeId: pump.id }] }));
    expect((await read('links', `cog_3d_cadnode_${pump.id}`, 'CogniteCADNode')).object3D).toEqual(object3D);
    expect((await written()).filter((x) => x.startsWith('objects:'))).toEqual([`${object3D.space}:${object3D.externalId}`]);

    // Unlinking another asset's pair removes nothing; the asset's own pair goes.
    await ok(post('/3d/contextualization/cad/delete', { ...body, items: [{ asset: { instanceId: ref('pipe') }, nodeId: impeller.id }] }));
    expect(await read('links', `cog_3d_cadnode_${impeller.id}`, 'CogniteCADNode')).toBeDefined();
    expect(await ok(post('/3d/contextualization/cad/delete', body))).toEqual({});
    expect(await read('links', `cog_3d_cadnode_${impeller.id}`, 'CogniteCADNode')).toBeUndefined();
    await ok(post('/3d/contextualization/cad/delete', { ...body, items: [{ asset: { instanceId: ref('pump') }, nodeId: pump.id }] }));
    expect((await written()).filter((x) => x.startsWith('links:'))).toEqual([]);
  });

  it('refuses bad input, naming it, and writes nothing', async () => {
    const before = await written();
    const good = { asset: { instanceId: ref('pipe') }, nodeId: nodes[1].id };
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [], dmsContextualizationConfig: config('cad-r1') }, /items/],
      [{ items: Array(101).fill(good), dmsContextualizationConfig: config('cad-r1') }, /items/],
      [{ items: [good, { asset: { instanceId: ref('pipe') }, nodeId: 'x' }], dmsContextualizationConfig: config('cad-r1') }, /items\[1\]\.nodeId/],
      [{ items: [good], dmsContextualizationConfig: { object3DSpace: 'objects', contextualizationSpace: 'links' } }, /dmsContextualizationConfig\.revisionInstanceId/],
      [{ items: [good], dmsContextualizationConfig: config('nothing') }, /dmsContextualizationConfig\.revision\.instanceId: the revision .* does not exist/],
      [{ items: [good], dmsContextualizationConfig: config('cad-bad') }, /the 3D revision \d+ has no nodes \(its status is Failed\)/],
      [{ items: [good], dmsContextualizationConfig: config('cad-r9') }, /the 3D revision 424242 its CAD revision names does not exist/],
      [{ items: [good], dmsContextualizationConfig: config('pc-r1') }, /dmsContextualizationConfig\.revision\.instanceId: the revision .* does not exist as a CogniteCADRevision/],
      [{ items: [good, { asset: { instanceId: ref('pipe') }, nodeId: 999999 }], dmsContextualizationConfig: config('cad-r1') }, /items\[1\]\.nodeId: the node 999999 is not in the revision/],
      [{ items: [good, { asset: { instanceId: ref('ghost') }, nodeId: nodes[1].id }], dmsContextualizationConfig: config('cad-r1') }, /items\[1\]\.asset\.instanceId: the asset .*ghost.* does not exist/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await post('/3d/contextualization/cad', body), 400)).toMatch(message);
    expect(await written()).toEqual(before);
  });

  it('refuses a caller who may not write the contextualization space, writing nothing', async () => {
    const before = await written();
    const res = await h.request('POST', `${h.base}/3d/contextualization/cad`, { items: [{ asset: { instanceId: ref('pipe') }, nodeId: nodes[1].id }], dmsContextualizationConfig: config('cad-r1') }, readOnly);
    expect(res.status).toBe(403);
    expect(await written()).toEqual(before);
    expect((await read('plant', 'pipe', 'CogniteAsset')).object3D ?? null).toBeNull();
  });
});

describe('CAD contextualization and 3D access', () => {
  it('linking needs threedAcl:READ over the revision whose nodes it links, writing nothing otherwise', async () => {
    const writer = [capability('dataModelInstancesAcl', ['READ', 'WRITE']), capability('dataModelsAcl', ['READ'])];
    const no3d = bearer(await namedClientToken(h, 'ctx-no3d', writer));
    const dataSet = (await ok(post('/datasets', { items: [{ externalId: 'ctx-elsewhere' }] }))).items[0].id;
    const other3d = bearer(await namedClientToken(h, 'ctx-other3d', [...writer, capability('threedAcl', ['READ'], { datasetScope: { ids: [dataSet] } })]));
    const body = { items: [{ asset: { instanceId: ref('pipe') }, nodeId: nodes[1].id }], dmsContextualizationConfig: config('cad-r1') };
    const before = await written();
    const path = `${h.base}/3d/contextualization/cad`;
    expect(errorMessage(await h.request('POST', path, body, no3d), 403)).toMatch(/threedAcl:READ/);
    // A revision outside the caller's 3D scope answers as one that does not exist.
    expect(errorMessage(await h.request('POST', path, body, other3d), 400)).toMatch(new RegExp(`the 3D revision ${revisionId} its CAD revision names does not exist`));
    expect(await written()).toEqual(before);
  });
});

describe('360 image contextualization', () => {
  const polygon = { version: '2.0.0', data: [4, 0.9, 2.2, 0.7, 2.3, 0.5, 1.4, 0.8, 1.4] };
  const item = { asset: { instanceId: ref('pipe') }, image360: { instanceId: ref('photo') }, polygon };

  it('links an image to an asset as an annotation edge with the polygon, and unlinks the pair', async () => {
    expect(await ok(post('/3d/contextualization/image360', { items: [item, { ...item, polygon: { ...polygon, data: [4, 0, 0, 1, 0, 1, 1, 0, 1] } }], dmsContextualizationConfig: config('img-r1') }))).toEqual({});
    const object3D = (await read('plant', 'pipe', 'CogniteAsset')).object3D;
    const { items } = await ok(
      post('/models/instances/list', {
        instanceType: 'edge',
        sources: [{ source: view('Cognite360ImageAnnotation') }],
        filter: { equals: { property: ['edge', 'startNode'], value: object3D } },
      }),
    );
    expect(items).toHaveLength(2);
    for (const edge of items) {
      expect(edge).toMatchObject({ space: 'links', type: { space: 'cdf_cdm', externalId: 'image-360-annotation' }, startNode: object3D, endNode: ref('photo') });
    }
    const props = items.map((e: { properties: Record<string, Record<string, Record<string, unknown>>> }) => e.properties.cdf_cdm['Cognite360ImageAnnotation/v1']);
    expect(props.map((p: { polygon: number[] }) => p.polygon).sort()).toEqual([polygon.data, [4, 0, 0, 1, 0, 1, 1, 0, 1]].sort());
    expect(props[0]).toMatchObject({ formatVersion: '2.0.0', status: 'Approved' });

    expect(await ok(post('/3d/contextualization/image360/delete', { items: [{ asset: item.asset, image360: item.image360 }], dmsContextualizationConfig: config('img-r1', false) }))).toEqual({});
    expect((await written()).filter((x) => x.startsWith('links:'))).toEqual([]);
  });

  it('refuses bad input and an image outside the revision, writing nothing', async () => {
    const before = await written();
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [{ ...item, polygon: { version: '2.0.0', data: [] } }], dmsContextualizationConfig: config('img-r1') }, /items\[0\]\.polygon\.data/],
      [{ items: [{ ...item, polygon: { version: '1.0.0', data: polygon.data } }], dmsContextualizationConfig: config('img-r1') }, /items\[0\]\.polygon\.version/],
      [{ items: [item, { ...item, polygon: { version: '2.0.0', data: [...polygon.data, 2, 0, 0, 1, 1] } }], dmsContextualizationConfig: config('img-r1') }, /items\[1\]\.polygon\.data\[9\]: a polygon starts with its number of vertices, at least 3/],
      [{ items: [{ ...item, polygon: { version: '2.0.0', data: [4, 0, 0, 1, 0, 1, 1] } }], dmsContextualizationConfig: config('img-r1') }, /items\[0\]\.polygon\.data\[0\]: the polygon of 4 vertices needs 8 numbers/],
      [{ items: [{ ...item, polygon: undefined }], dmsContextualizationConfig: config('img-r1') }, /polygon/],
      [{ items: [item], dmsContextualizationConfig: config('img-r2') }, /items\[0\]\.image360\.instanceId: the 360 image .* is not in the revision/],
      [{ items: [item, { ...item, image360: { instanceId: ref('nothing') } }], dmsContextualizationConfig: config('img-r1') }, /items\[1\]\.image360\.instanceId: .* does not exist/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await post('/3d/contextualization/image360', body), 400)).toMatch(message);
    const res = await h.request('POST', `${h.base}/3d/contextualization/image360`, { items: [item], dmsContextualizationConfig: config('img-r1') }, readOnly);
    expect(res.status).toBe(403);
    expect(await written()).toEqual(before);
  });
});

describe('point cloud contextualization', () => {
  const volume = { type: 'Box', version: '1.0.0', data: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 5, 5, 1] };
  const item = { assetInstanceId: ref('pump'), volumeReference: 'vol-1', volume };
  const rcItem = { asset: { instanceId: ref('pump') }, volumeReference: 'vol-1', volume };

  it('links a volume to an asset as a CognitePointCloudVolume showing its 3D object, and unlinks it', async () => {
    expect(await ok(post('/3d/contextualization/pointcloud', { items: [rcItem], dmsContextualizationConfig: config('pc-r1') }))).toEqual({});
    const object3D = (await read('plant', 'pump', 'CogniteAsset')).object3D;
    const { items } = await ok(
      post('/models/instances/list', { instanceType: 'node', sources: [{ source: view('CognitePointCloudVolume') }], filter: { equals: { property: ['cdf_cdm', 'CognitePointCloudVolume/v1', 'object3D'], value: object3D } } }),
    );
    expect(items).toHaveLength(1);
    expect(items[0].properties.cdf_cdm['CognitePointCloudVolume/v1']).toMatchObject({
      object3D,
      model3D: ref('pc'),
      revisions: [ref('pc-r1')],
      volumeReferences: ['vol-1'],
      volumeType: 'Box',
      formatVersion: '1.0.0',
      volume: volume.data,
    });
    // Another asset's pair is not a link: nothing goes.
    await ok(post('/3d/contextualization/pointcloud/delete', { items: [{ asset: { instanceId: ref('pipe') }, volumeReference: 'vol-1' }], dmsContextualizationConfig: config('pc-r1') }));
    expect((await written()).filter((x) => x.startsWith('links:'))).toHaveLength(1);
    expect(await ok(post('/3d/contextualization/pointcloud/delete', { items: [{ assetInstanceId: ref('pump'), volumeReference: 'vol-1' }], dmsContextualizationConfig: config('pc-r1', false) }))).toEqual({});
    expect((await written()).filter((x) => x.startsWith('links:'))).toEqual([]);
  });

  it('refuses bad input and a caller who may not write the space, writing nothing', async () => {
    const before = await written();
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [{ ...item, volume: { ...volume, type: 'Sphere' } }], dmsContextualizationConfig: config('pc-r1') }, /items\[0\]\.volume\.type/],
      [{ items: [{ ...item, volumeReference: '' }], dmsContextualizationConfig: config('pc-r1') }, /items\[0\]\.volumeReference/],
      [{ items: [item, { ...item, volume: { ...volume, type: 'Cylinder' } }], dmsContextualizationConfig: config('pc-r1') }, /items\[1\]\.volume\.data: a Cylinder is given by 7 numbers, not 16/],
      [{ items: [{ ...item, ...rcItem }], dmsContextualizationConfig: config('pc-r1') }, /items\[0\]: give the asset as asset\.instanceId or as assetInstanceId, not both/],
      [{ items: [{ volumeReference: 'v', volume }], dmsContextualizationConfig: config('pc-r1') }, /items\[0\]\.asset: the asset is required/],
      [{ items: [item], dmsContextualizationConfig: config('cad-r1', false) }, /dmsContextualizationConfig\.revisionInstanceId: the revision .* does not exist as a CognitePointCloudRevision/],
      [{ items: [item, { ...item, assetInstanceId: ref('ghost') }], dmsContextualizationConfig: config('pc-r1') }, /items\[1\]\.assetInstanceId: the asset .* does not exist/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await post('/3d/contextualization/pointcloud', body), 400)).toMatch(message);
    const res = await h.request('POST', `${h.base}/3d/contextualization/pointcloud`, { items: [item], dmsContextualizationConfig: config('pc-r1') }, readOnly);
    expect(res.status).toBe(403);
    expect(await written()).toEqual(before);
  });
});
