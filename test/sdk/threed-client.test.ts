/**
 * 3D through the official JavaScript client, called as its users call it (and as the client's own 3D
 * integration suite does): a model, a revision of an uploaded glTF file waited on until `Done`, its nodes
 * listed, filtered, read by ids and by ancestry, asset mappings made, listed, filtered and deleted, the
 * revision updated, a thumbnail set and read through the 3D files, and everything deleted again.
 */
import type { CogniteClient, FileInfo, Model3D, Node3D, Revision3D } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'threed' });
  client = h.client;
});
afterAll(() => h?.close());

/** Waits for the revision's processing job, without polling the revision. */
const processingDone = () => jobsDone({ strata: h.strata, base: `/api/v1/projects/${client.project}` } as Harness);

const GLTF = {
  asset: { version: '2.0' },
  scenes: [{ name: 'RootNode', nodes: [0] }],
  nodes: [
    { name: 'Frame', children: [1, 2], extras: { CogniteClient: { InheritType: '1' } } },
    { name: 'Beam', mesh: 0, translation: [0, 0, 1] },
    { name: 'Column', mesh: 0 },
  ],
  meshes: [{ primitives: [{ attributes: { POSITION: 0 } }] }],
  accessors: [{ componentType: 5126, count: 2, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 1] }],
};

describe('3D through the official JavaScript client', () => {
  let model: Model3D;
  let file: FileInfo;
  let revision: Revision3D;
  let nodes: Node3D[];

  it('creates, lists, retrieves and updates models', async () => {
    [model] = await client.models3D.create([{ name: 'sdk model', metadata: { origin: 'sdk' } }]);
    expect(model).toMatchObject({ name: 'sdk model', metadata: { origin: 'sdk' } });
    expect(model.createdTime).toBeInstanceOf(Date);
    expect((await client.models3D.list().autoPagingToArray()).map((m) => m.id)).toContain(model.id);
    expect(await client.models3D.retrieve(model.id)).toMatchObject({ id: model.id, name: 'sdk model' });
    const [updated] = await client.models3D.update([{ id: model.id, update: { name: { set: 'sdk model 2' } } }]);
    expect(updated.name).toBe('sdk model 2');
  });

  it('creates a revision of an uploaded glTF file, which processing makes Done', async () => {
    file = (await client.files.upload({ name: 'frame.gltf', mimeType: 'model/gltf+json' }, JSON.stringify(GLTF), false, true)) as FileInfo;
    const created = await client.revisions3D.create(model.id, [{ fileId: file.id }]);
    expect(created).toHaveLength(1);
    await processingDone();
    revision = await client.revisions3D.retrieve(model.id, created[0].id);
    expect(revision).toMatchObject({ status: 'Done', fileId: file.id, published: false, assetMappingCount: 0 });
    expect(revision.rotation).not.toBeDefined();
    expect((await client.revisions3D.list(model.id).autoPagingToArray()).map((r) => r.id)).toEqual([revision.id]);
  });

  it('lists, filters, retrieves and climbs the nodes', async () => {
    nodes = await client.revisions3D.list3DNodes(model.id, revision.id).autoPagingToArray();
    expect(nodes.map((n) => n.name)).toEqual(['RootNode', 'Frame', 'Beam', 'Column']);
    expect(nodes[2]).toMatchObject({ treeIndex: 2, depth: 2, subtreeSize: 1, parentId: nodes[1].id, boundingBox: { min: [0, 0, 1], max: [1, 1, 2] } });
    const two = await client.revisions3D.list3DNodes(model.id, revision.id).autoPagingToArray({ limit: 2 });
    expect(await client.revisions3D.retrieve3DNodes(model.id, revision.id, two.map((n) => ({ id: n.id })))).toEqual(two);
    const byProperty = await client.revisions3D.filter3DNodes(model.id, revision.id, { filter: { properties: { CogniteClient: { InheritType: ['1'] } } } }).autoPagingToArray();
    expect(byProperty.map((n) => n.name)).toEqual(['Frame']);
    expect(await client.revisions3D.filter3DNodes(model.id, revision.id, { filter: { names: ['RootNode'] } }).autoPagingToArray()).toHaveLength(1);
    expect(await client.revisions3D.filter3DNodes(model.id, revision.id, { filter: { properties: { Item: { Type: ['something weird'] } } } }).autoPagingToArray()).toEqual([]);
    const subtree = await client.revisions3D.list3DNodes(model.id, revision.id, { nodeId: nodes[1].id, depth: 0 }).autoPagingToArray();
    expect(subtree.map((n) => n.name)).toEqual(['Frame']);
    const ancestors = await client.revisions3D.list3DNodeAncestors(model.id, revision.id, nodes[3].id).autoPagingToArray();
    expect(ancestors.map((n) => n.name)).toEqual(['RootNode', 'Frame', 'Column']);
  });

  it('creates, lists, filters and deletes asset mappings', async () => {
    const wanted = [
      { nodeId: nodes[2].id, assetId: 501 },
      { nodeId: nodes[3].id, assetId: 502 },
    ];
    const created = await client.assetMappings3D.create(model.id, revision.id, wanted);
    expect(created.map((m) => m.assetId).sort()).toEqual([501, 502]);
    const listed = await client.assetMappings3D.list(model.id, revision.id).autoPagingToArray({ limit: 2 });
    expect(listed.map((m) => m.nodeId).sort()).toEqual(wanted.map((m) => m.nodeId).sort());
    expect((await client.assetMappings3D.list(model.id, revision.id, { assetId: 502 }).autoPagingToArray()).map((m) => m.nodeId)).toEqual([nodes[3].id]);
    expect((await client.assetMappings3D.filter(model.id, revision.id, { filter: { treeIndexes: [2] } }).autoPagingToArray()).map((m) => m.assetId)).toEqual([501]);
    expect(await client.assetMappings3D.delete(model.id, revision.id, wanted)).toEqual({});
    expect(await client.assetMappings3D.list(model.id, revision.id).autoPagingToArray()).toEqual([]);
  });

  it('updates the revision and sets a thumbnail the 3D files serve', async () => {
    const [updated] = await client.revisions3D.update(model.id, [
      { id: revision.id, update: { rotation: { set: [3, 14, 15] }, camera: { set: { target: [1, 2, 3], position: [3, 2, 1] } }, metadata: { set: { property0: 'value0' } } } },
    ]);
    expect(updated).toMatchObject({ rotation: [3, 14, 15], camera: { target: [1, 2, 3], position: [3, 2, 1] }, metadata: { property0: 'value0' } });
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('pixels')]);
    const image = (await client.files.upload({ name: 'thumb.png', mimeType: 'image/png' }, png, false, true)) as FileInfo;
    expect(await client.revisions3D.updateThumbnail(model.id, revision.id, image.id)).toEqual({});
    const { thumbnailThreedFileId } = await client.revisions3D.retrieve(model.id, revision.id);
    expect(Buffer.from(await client.files3D.retrieve(thumbnailThreedFileId!)).equals(png)).toBe(true);
  });

  it('gets a 400 for the nodes of a revision whose processing failed', async () => {
    const text = (await client.files.upload({ name: 'notes.txt', mimeType: 'text/plain' }, 'not a model', false, true)) as FileInfo;
    const [failed] = await client.revisions3D.create(model.id, [{ fileId: text.id }]);
    await processingDone();
    expect((await client.revisions3D.retrieve(model.id, failed.id)).status).toBe('Failed');
    const error = await clientFailure(client.revisions3D.list3DNodes(model.id, failed.id).autoPagingToArray());
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/failed/);
  });

  it('deletes revisions and models', async () => {
    expect(await client.revisions3D.delete(model.id, [{ id: revision.id }])).toEqual({});
    expect((await client.revisions3D.list(model.id).autoPagingToArray()).map((r) => r.id)).not.toContain(revision.id);
    expect(await client.models3D.delete([{ id: model.id }])).toEqual({});
    expect((await client.models3D.list().autoPagingToArray()).map((m) => m.id)).not.toContain(model.id);
  });
});
