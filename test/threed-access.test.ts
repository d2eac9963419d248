/**
 * Who reaches which 3D models: `threedAcl` scoped to a data set reaches the models in it and everything
 * under them (revisions, nodes, mappings, 3D files); a model outside reads exactly as one that does not exist.
 * The data modeling jobs stand in their spaces: an instance space scope reaches the jobs of its spaces only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { startHarness, type Harness, type Response } from './support/harness.js';
import { jobsDone } from './support/jobs.js';

let h: Harness;
let scoped: Record<string, string>;
let inSpace: Record<string, string>;
const as = (method: string, path: string, body?: unknown) => h.request(method, `${h.base}${path}`, body, scoped);
const GLTF = JSON.stringify({ asset: { version: '2.0' }, nodes: [{ name: 'only' }] });

interface Placed {
  model: number;
  revision: number;
  node: number;
  output: number;
}
const placed: Record<'a' | 'b', Placed> = {} as never;

async function place(dataSetId: number): Promise<Placed> {
  const model = (await h.post('/3d/models', { items: [{ name: `in ${dataSetId}`, dataSetId }] })).body.items[0].id;
  const file = (await h.post('/files', { name: 'm.gltf' })).body;
  const { pathname, search } = new URL(file.uploadUrl);
  await h.strata.app.inject({ method: 'PUT', url: pathname + search, payload: GLTF });
  const revision = (await h.post(`/3d/models/${model}/revisions`, { items: [{ fileId: file.id }] })).body.items[0].id;
  await jobsDone(h);
  const base = `/3d/models/${model}/revisions/${revision}`;
  const node = (await h.get(`${base}/nodes`)).body.items[1].id;
  await h.post(`${base}/mappings`, { items: [{ nodeId: node, assetId: 77 }] });
  const output = (await h.get(`${base}/outputs`)).body.items[0].blobId;
  return { model, revision, node, output };
}

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('threed-a', 'jobs-s1') });
  const [dsA, dsB] = (await h.post('/datasets', { items: [{ externalId: '3d-a' }, { externalId: '3d-b' }] })).body.items.map((d: { id: number }) => d.id);
  placed.a = await place(dsA);
  placed.b = await place(dsB);
  scoped = bearer(await namedClientToken(h, 'threed-a', [capability('threedAcl', ['READ', 'UPDATE'], { datasetScope: { ids: [dsA] } })]));
  inSpace = bearer(
    await namedClientToken(h, 'jobs-s1', [
      capability('dataModelInstancesAcl', ['READ', 'WRITE'], { spaceIdScope: { spaceIds: ['s1'] } }),
      capability('dataModelsAcl', ['READ']),
      capability('sessionsAcl', ['CREATE']),
    ]),
  );
});
afterAll(() => h.close());

/** The status and body of an answer, without what names the id asked for. */
const shape = (r: Response, id: number) => ({ status: r.status, body: JSON.stringify(r.body).replaceAll(String(id), 'ID') });

describe('3D under a data-set scope', () => {
  it('lists and reads only the models in the scope', async () => {
    expect((await as('GET', '/3d/models?limit=1000')).body.items.map((m: { id: number }) => m.id)).toEqual([placed.a.model]);
    expect((await as('GET', `/3d/models/${placed.a.model}`)).status).toBe(200);
    expect(shape(await as('GET', `/3d/models/${placed.b.model}`), placed.b.model)).toEqual(shape(await as('GET', '/3d/models/123456'), 123456));
  });

  it('answers for what lies under a model outside it as for what does not exist', async () => {
    const b = placed.b;
    for (const path of [`/3d/models/${b.model}/revisions`, `/3d/models/${b.model}/revisions/${b.revision}/nodes`, `/3d/models/${b.model}/revisions/${b.revision}/mappings`]) {
      expect(shape(await as('GET', path), b.model)).toEqual(shape(await as('GET', path.replace(String(b.model), '123456')), 123456));
    }
    expect(shape(await as('GET', `/3d/files/${b.output}/scene.gltf`), b.output)).toEqual(shape(await as('GET', '/3d/files/123456/scene.gltf'), 123456));
    expect((await as('GET', `/3d/files/${placed.a.output}/scene.gltf`)).status).toBe(200);
    const write = await as('POST', `/3d/models/${b.model}/revisions/${b.revision}/mappings`, { items: [{ nodeId: b.node, assetId: 1 }] });
    expect(write.status).toBe(400);
    expect((await h.get(`/3d/models/${b.model}/revisions/${b.revision}`)).body.assetMappingCount).toBe(1);
  });

  it('gives the nodes an asset is mapped to in the models in the scope only', async () => {
    expect((await as('GET', '/3d/mappings/77/modelnodes')).body.items).toEqual([{ modelId: placed.a.model, revisionId: placed.a.revision, nodeId: placed.a.node }]);
    expect((await h.get('/3d/mappings/77/modelnodes')).body.items).toHaveLength(2);
  });
});

describe('3D jobs under an instance space scope', () => {
  const job = (space: string, externalId: string, nonce: string) => ({
    space,
    externalId,
    name: externalId,
    type: 'ImageTextDetection',
    source: { type: 'Cognite360ImageCollection', instanceId: { space: 'images', externalId: 'c' } },
    configuration: {},
    nonce,
  });
  const nonce = async () => (await h.post('/sessions', { items: [{ tokenExchange: true }] })).body.items[0].nonce as string;
  const asJobs = (path: string, body: unknown) => h.request('POST', `${h.base}${path}`, body, inSpace);

  it('lists, writes and reads only the jobs of the spaces in the scope', async () => {
    for (const space of ['s1', 's2']) expect((await h.post('/3d/jobs', { items: [job(space, `j-${space}`, await nonce())] })).status).toBe(201);
    expect((await asJobs('/3d/jobs/list', {})).body.items.map((j: { space: string }) => j.space)).toEqual(['s1']);
    expect((await asJobs('/3d/jobs', { items: [job('s2', 'mine', 'n')] })).status).toBe(403);
    expect((await asJobs('/3d/jobs/delete', { items: [{ space: 's2', externalId: 'j-s2' }] })).status).toBe(403);
    const result = { instanceId: { space: 'images', externalId: 'f' } };
    const hidden = await asJobs('/3d/job/result/rejections', { job: { space: 's2', externalId: 'j-s2' }, result, add: ['k'] });
    const absent = await asJobs('/3d/job/result/rejections', { job: { space: 's1', externalId: 'j-none' }, result, add: ['k'] });
    expect(hidden.status).toBe(400);
    expect(hidden.body.error.message.replace('s2', 'X').replace('j-s2', 'Y')).toBe(absent.body.error.message.replace('s1', 'X').replace('j-none', 'Y'));
    expect((await h.post('/3d/jobs/list', {})).body.items).toHaveLength(2);
  });
});
