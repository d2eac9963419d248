/**
 * 3D contextualization of data modeling projects: links between CAD nodes, 360° images and point cloud
 * volumes and `CogniteAsset` instances, kept as core data model instances. Every read and write goes
 * through this API with the caller's own token, so data modeling's space scopes decide what a caller may
 * link; each request writes (or deletes) its instances in one request, so it applies completely or not at all.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError, badRequest } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { scopeCondition } from '../../auth/access.js';
import { Sql, sql, TRUE } from '../../storage/sql.js';
import { threedModel } from './model.js';
import { DmInstance } from './schema.js';

/** Items per contextualization request: each may write three instances, within one instance write. */
export const CONTEXTUALIZATION_ITEMS = 100;
/** Numbers in a polygon list: the reference's limit, and the longest list a core model container holds. */
const MAX_POLYGON_NUMBERS = 1000;
/** Numbers of a volume of each shape (`1.0.0`): a 4×4 box matrix; a cylinder's two end points and radius. */
const VOLUME_NUMBERS = { Box: 16, Cylinder: 7 } as const;

type Ref = { space: string; externalId: string };
const InstanceRef = Type.Object({ instanceId: DmInstance }, { additionalProperties: false });
const items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { minItems: 1, maxItems: CONTEXTUALIZATION_ITEMS });

/**
 * Where the links go and the revision they are for: `revision.instanceId` in the release candidate bodies,
 * `revisionInstanceId` in the deprecated ones; either is accepted by every operation.
 */
const Config = Type.Object(
  {
    object3DSpace: DmInstance.properties.space,
    contextualizationSpace: DmInstance.properties.space,
    revision: Type.Optional(InstanceRef),
    revisionInstanceId: Type.Optional(DmInstance),
  },
  { additionalProperties: false },
);
type Config = Static<typeof Config>;
const body = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ items: items(item), dmsContextualizationConfig: Config }, { additionalProperties: false });

export const CadLinksBody = body(Type.Object({ asset: InstanceRef, nodeId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }, { additionalProperties: false }));
export type CadLinksBody = Static<typeof CadLinksBody>;
const Polygon = Type.Object({ version: Type.Literal('2.0.0'), data: Type.Array(Type.Number(), { minItems: 7, maxItems: MAX_POLYGON_NUMBERS }) }, { additionalProperties: false });
export const Image360LinksBody = body(Type.Object({ asset: InstanceRef, image360: InstanceRef, polygon: Polygon }, { additionalProperties: false }));
export type Image360LinksBody = Static<typeof Image360LinksBody>;
export const Image360UnlinksBody = body(Type.Object({ asset: InstanceRef, image360: InstanceRef }, { additionalProperties: false }));
export type Image360UnlinksBody = Static<typeof Image360UnlinksBody>;
const VolumeReference = Type.String({ minLength: 1, maxLength: 255 });
/** The asset as `asset.instanceId` (release candidate bodies) or `assetInstanceId` (deprecated ones). */
const PointCloudAsset = { asset: Type.Optional(InstanceRef), assetInstanceId: Type.Optional(DmInstance) };
const Volume = Type.Object(
  { type: Type.Union([Type.Literal('Box'), Type.Literal('Cylinder')]), version: Type.Literal('1.0.0'), data: Type.Array(Type.Number(), { minItems: 7, maxItems: 16 }) },
  { additionalProperties: false },
);
export const PointCloudLinksBody = body(Type.Object({ ...PointCloudAsset, volumeReference: VolumeReference, volume: Volume }, { additionalProperties: false }));
export type PointCloudLinksBody = Static<typeof PointCloudLinksBody>;
export const PointCloudUnlinksBody = body(Type.Object({ ...PointCloudAsset, volumeReference: VolumeReference }, { additionalProperties: false }));
export type PointCloudUnlinksBody = Static<typeof PointCloudUnlinksBody>;

/** A polygon list: each polygon is its vertex count (at least 3) and that many (phi, theta) pairs. */
function checkPolygons(data: number[], path: string) {
  for (let at = 0; at < data.length; ) {
    const count = data[at];
    if (!Number.isInteger(count) || count < 3) throw badRequest(`${path}[${at}]: a polygon starts with its number of vertices, at least 3 (got ${count})`);
    if (at + 1 + 2 * count > data.length) throw badRequest(`${path}[${at}]: the polygon of ${count} vertices needs ${2 * count} numbers after its count; ${data.length - at - 1} follow`);
    at += 1 + 2 * count;
  }
}

/** The asset of a point cloud item, given one way or the other. */
function pointCloudAsset(item: { asset?: { instanceId: Ref }; assetInstanceId?: Ref }, i: number): { ref: Ref; path: string } {
  if (item.asset && item.assetInstanceId) throw badRequest(`items[${i}]: give the asset as asset.instanceId or as assetInstanceId, not both`);
  if (item.asset) return { ref: item.asset.instanceId, path: `items[${i}].asset.instanceId` };
  if (item.assetInstanceId) return { ref: item.assetInstanceId, path: `items[${i}].assetInstanceId` };
  throw badRequest(`items[${i}].asset: the asset is required (as asset.instanceId or assetInstanceId)`);
}

const view = (externalId: string) => ({ type: 'view', space: 'cdf_cdm', externalId, version: 'v1' }) as const;
/** The type of the annotation edges, a system node of every project (models/system-nodes.ts). */
const IMAGE_ANNOTATION_TYPE: Ref = { space: 'cdf_cdm', externalId: 'image-360-annotation' };
const key = (r: Ref) => `${r.space}\u0000${r.externalId}`;
const same = (a: unknown, b: Ref) => typeof a === 'object' && a !== null && key(a as Ref) === key(b);
const shown = (r: Ref) => JSON.stringify({ space: r.space, externalId: r.externalId });
/** A stable external id of bounded length for what `parts` name together. */
const derivedId = (prefix: string, ...parts: string[]) => `${prefix}_${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40)}`;

type Props = Record<string, unknown>;
type Write = { instanceType: 'node' | 'edge'; space: string; externalId: string; [k: string]: unknown };

/** The data modeling calls of one request, as its caller. */
class Caller {
  constructor(
    private readonly services: Services,
    private readonly project: string,
    private readonly token: string,
  ) {}

  async post(path: string, body: unknown): Promise<{ items: Array<Record<string, unknown>> }> {
    const res = await this.services.api!.call({ project: this.project, credential: { token: this.token }, method: 'POST', path, body });
    if (res.status >= 300) {
      const error = (res.body as { error?: { message?: string } })?.error;
      throw new ApiError(res.status, `${path}: ${error?.message ?? `status ${res.status}`}`);
    }
    return res.body as { items: Array<Record<string, unknown>> };
  }

  /** The properties of each existing node of `refs` in `viewId` (empty when it has none there), by key. */
  async nodes(refs: Ref[], viewId: string): Promise<Map<string, Props>> {
    const unique = [...new Map(refs.map((r) => [key(r), { instanceType: 'node', space: r.space, externalId: r.externalId }])).values()];
    const found = new Map<string, Props>();
    if (unique.length === 0) return found;
    const { items } = await this.post('/models/instances/byids', { items: unique, sources: [{ source: view(viewId) }] });
    for (const item of items) {
      const props = (item.properties as Record<string, Record<string, Props>> | undefined)?.cdf_cdm?.[`${viewId}/v1`] ?? {};
      found.set(key(item as unknown as Ref), props);
    }
    return found;
  }

  write(items: Write[]) {
    return this.post('/models/instances', { items: [...new Map(items.map((i) => [`${i.instanceType}\u0000${key(i)}`, i])).values()] });
  }

  delete(items: Array<{ instanceType: 'node' | 'edge' } & Ref>) {
    if (items.length === 0) return Promise.resolve();
    return this.post('/models/instances/delete', { items: items.map((i) => ({ instanceType: i.instanceType, space: i.space, externalId: i.externalId })) });
  }
}

function revisionOf(config: Config): Ref {
  const revision = config.revision?.instanceId ?? config.revisionInstanceId;
  if (!revision) throw badRequest('dmsContextualizationConfig.revisionInstanceId: the revision is required (as revisionInstanceId or revision.instanceId)');
  return revision;
}

/** The revision's properties in `viewId`; a 400 naming it when it does not exist or is not of that kind. */
async function readRevision(caller: Caller, config: Config, viewId: string): Promise<{ ref: Ref; props: Props }> {
  const ref = revisionOf(config);
  const where = config.revision ? 'dmsContextualizationConfig.revision.instanceId' : 'dmsContextualizationConfig.revisionInstanceId';
  const props = (await caller.nodes([ref], viewId)).get(key(ref));
  if (!props) throw badRequest(`${where}: the revision ${shown(ref)} does not exist as a ${viewId}`);
  if (!props.model3D) throw badRequest(`${where}: the instance ${shown(ref)} is not a ${viewId} with a model3D`);
  return { ref, props };
}

/**
 * The 3D object each asset is shown by: the one its `object3D` names, or a new one in `object3DSpace`
 * (with the asset's `object3D` set to it, among `writes`). A 400 names the first asset that does not exist.
 */
async function objectsOf(caller: Caller, assets: Array<{ ref: Ref; path: string }>, object3DSpace: string, writes: Write[]): Promise<Map<string, Ref>> {
  const found = await caller.nodes(
    assets.map((a) => a.ref),
    'CogniteAsset',
  );
  const objects = new Map<string, Ref>();
  for (const { ref, path } of assets) {
    if (objects.has(key(ref))) continue;
    const props = found.get(key(ref));
    if (!props) throw badRequest(`${path}: the asset ${shown(ref)} does not exist`);
    const existing = props.object3D as Ref | null | undefined;
    if (existing) {
      objects.set(key(ref), { space: existing.space, externalId: existing.externalId });
      continue;
    }
    const object = { space: object3DSpace, externalId: derivedId('cog_3d_object', ref.space, ref.externalId) };
    objects.set(key(ref), object);
    writes.push({ instanceType: 'node', ...object, sources: [{ source: view('Cognite3DObject'), properties: { name: props.name ?? null } }] });
    writes.push({ instanceType: 'node', ...ref, sources: [{ source: view('CogniteVisualizable'), properties: { object3D: object } }] });
  }
  return objects;
}

/** The 3D objects assets are shown by already, for unlinking: an asset without one has no links. */
async function existingObjectsOf(caller: Caller, assets: Array<{ ref: Ref; path: string }>): Promise<Map<string, Ref | undefined>> {
  const found = await caller.nodes(
    assets.map((a) => a.ref),
    'CogniteAsset',
  );
  const objects = new Map<string, Ref | undefined>();
  for (const { ref, path } of assets) {
    const props = found.get(key(ref));
    if (!props) throw badRequest(`${path}: the asset ${shown(ref)} does not exist`);
    objects.set(key(ref), (props.object3D as Ref | null) ?? undefined);
  }
  return objects;
}

const assetRefs = (items: Array<{ asset: { instanceId: Ref } }>) => items.map((item, i) => ({ ref: item.asset.instanceId, path: `items[${i}].asset.instanceId` }));

const cadNodeRef = (space: string, nodeId: number): Ref => ({ space, externalId: `cog_3d_cadnode_${nodeId}` });

/** The 3D revision a CAD revision instance names: one of this project's, processed, holding the nodes. */
async function cadNodes(services: Services, projectId: number, revision: Ref, props: Props, nodeIds: number[]) {
  const revisionId = props.revisionId;
  const where = 'dmsContextualizationConfig.revision.instanceId';
  if (typeof revisionId !== 'number') throw badRequest(`${where}: the CAD revision ${shown(revision)} has no revisionId`);
  // Within the caller's 3D scope (that of the revision's model): a revision it may not read is one that does not exist.
  const scope = scopeCondition(services.reach?.('threedAcl'), threedModel.catalog) ?? TRUE;
  const row = await services.db.get<{ status: string }>(
    sql`SELECT tr.status FROM threed_revisions tr JOIN threed_models ${Sql.raw(threedModel.catalog.alias)} ON ${Sql.raw(threedModel.catalog.alias)}.project_id = tr.project_id AND ${Sql.raw(threedModel.catalog.alias)}.id = tr.model_id
        WHERE tr.project_id = ${projectId} AND tr.id = ${revisionId} AND ${scope}`,
  );
  if (!row) throw badRequest(`${where}: the 3D revision ${revisionId} its CAD revision names does not exist`);
  if (row.status !== 'Done') throw badRequest(`${where}: the 3D revision ${revisionId} has no nodes (its status is ${row.status})`);
  const rows = await services.db.all<{ id: number; tree_index: number; subtree_size: number; name: string }>(
    sql`SELECT id, tree_index, subtree_size, name FROM threed_nodes WHERE project_id = ${projectId} AND revision_id = ${revisionId} AND id IN (${[...new Set(nodeIds)]})`,
  );
  return new Map(rows.map((r) => [Number(r.id), { treeIndex: Number(r.tree_index), subtreeSize: Number(r.subtree_size), name: r.name }]));
}

function caller(services: Services, project: { name: string }, token: string) {
  return new Caller(services, project.name, token);
}

/** `POST /3d/contextualization/cad`: each node becomes a `CogniteCADNode` showing the asset's 3D object. */
export async function linkCadNodes(services: Services, project: { id: number; name: string }, token: string, body: CadLinksBody) {
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  const revision = await readRevision(dms, config, 'CogniteCADRevision');
  const nodes = await cadNodes(services, project.id, revision.ref, revision.props, body.items.map((i) => i.nodeId));
  body.items.forEach((item, i) => {
    if (!nodes.has(item.nodeId)) throw badRequest(`items[${i}].nodeId: the node ${item.nodeId} is not in the revision ${shown(revision.ref)}`);
  });
  const writes: Write[] = [];
  const objects = await objectsOf(dms, assetRefs(body.items), config.object3DSpace, writes);
  for (const item of body.items) {
    const node = nodes.get(item.nodeId)!;
    const properties = {
      name: node.name,
      cadNodeReference: String(item.nodeId),
      object3D: objects.get(key(item.asset.instanceId)),
      model3D: revision.props.model3D,
      revisions: [revision.ref],
      treeIndexes: [node.treeIndex],
      subTreeSizes: [node.subtreeSize],
    };
    writes.push({ instanceType: 'node', ...cadNodeRef(config.contextualizationSpace, item.nodeId), sources: [{ source: view('CogniteCADNode'), properties }] });
  }
  await dms.write(writes);
  return {};
}

/** `POST /3d/contextualization/cad/delete`: the CAD nodes that show the asset's 3D object go. */
export async function unlinkCadNodes(services: Services, project: { id: number; name: string }, token: string, body: CadLinksBody) {
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  await readRevision(dms, config, 'CogniteCADRevision');
  const objects = await existingObjectsOf(dms, assetRefs(body.items));
  const refs = body.items.map((item) => cadNodeRef(config.contextualizationSpace, item.nodeId));
  const found = await dms.nodes(refs, 'CogniteCADNode');
  const gone = body.items.flatMap((item, i) => {
    const object = objects.get(key(item.asset.instanceId));
    const props = found.get(key(refs[i]));
    return object && props && same(props.object3D, object) ? [{ instanceType: 'node' as const, ...refs[i] }] : [];
  });
  await dms.delete(gone);
  return {};
}

/** Reads the images and refuses one that does not exist or is not in the revision. */
async function checkImages(dms: Caller, revision: Ref, images: Ref[]) {
  const found = await dms.nodes(images, 'Cognite360Image');
  images.forEach((image, i) => {
    const props = found.get(key(image));
    if (!props) throw badRequest(`items[${i}].image360.instanceId: the 360 image ${shown(image)} does not exist`);
    if (!same(props.collection360, revision)) throw badRequest(`items[${i}].image360.instanceId: the 360 image ${shown(image)} is not in the revision ${shown(revision)}`);
  });
}

/** `POST /3d/contextualization/image360`: an annotation edge from the asset's 3D object to the image, with the polygon. */
export async function linkImages(services: Services, project: { id: number; name: string }, token: string, body: Image360LinksBody) {
  body.items.forEach((item, i) => checkPolygons(item.polygon.data, `items[${i}].polygon.data`));
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  const revision = await readRevision(dms, config, 'Cognite360ImageCollection');
  await checkImages(dms, revision.ref, body.items.map((i) => i.image360.instanceId));
  const writes: Write[] = [];
  const objects = await objectsOf(dms, assetRefs(body.items), config.object3DSpace, writes);
  for (const item of body.items) {
    const object = objects.get(key(item.asset.instanceId))!;
    const image = item.image360.instanceId;
    writes.push({
      instanceType: 'edge',
      space: config.contextualizationSpace,
      externalId: derivedId('cog_3d_image360annotation', key(object), key(image), JSON.stringify(item.polygon)),
      type: IMAGE_ANNOTATION_TYPE,
      startNode: object,
      endNode: { space: image.space, externalId: image.externalId },
      sources: [{ source: view('Cognite360ImageAnnotation'), properties: { polygon: item.polygon.data, formatVersion: item.polygon.version, status: 'Approved' } }],
    });
  }
  await dms.write(writes);
  return {};
}

/** `POST /3d/contextualization/image360/delete`: every annotation edge of the pair, in the contextualization space. */
export async function unlinkImages(services: Services, project: { id: number; name: string }, token: string, body: Image360UnlinksBody) {
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  const revision = await readRevision(dms, config, 'Cognite360ImageCollection');
  await checkImages(dms, revision.ref, body.items.map((i) => i.image360.instanceId));
  const objects = await existingObjectsOf(dms, assetRefs(body.items));
  const gone: Array<{ instanceType: 'edge' } & Ref> = [];
  for (const item of body.items) {
    const object = objects.get(key(item.asset.instanceId));
    if (!object) continue;
    const image = item.image360.instanceId;
    const equals = (property: string, value: unknown) => ({ equals: { property: ['edge', property], value } });
    const filter = { and: [equals('space', config.contextualizationSpace), equals('type', IMAGE_ANNOTATION_TYPE), equals('startNode', object), equals('endNode', { space: image.space, externalId: image.externalId })] };
    const { items } = await dms.post('/models/instances/list', { instanceType: 'edge', filter, limit: 1000 });
    for (const edge of items) gone.push({ instanceType: 'edge', space: String(edge.space), externalId: String(edge.externalId) });
  }
  await dms.delete([...new Map(gone.map((g) => [key(g), g])).values()]);
  return {};
}

const volumeRef = (space: string, revision: Ref, volumeReference: string): Ref => ({ space, externalId: derivedId('cog_3d_pointcloudvolume', key(revision), volumeReference) });

/** `POST /3d/contextualization/pointcloud`: each volume becomes a `CognitePointCloudVolume` showing the asset's 3D object. */
export async function linkVolumes(services: Services, project: { id: number; name: string }, token: string, body: PointCloudLinksBody) {
  const assets = body.items.map(pointCloudAsset);
  body.items.forEach(({ volume }, i) => {
    const expected = VOLUME_NUMBERS[volume.type];
    if (volume.data.length !== expected) throw badRequest(`items[${i}].volume.data: a ${volume.type} is given by ${expected} numbers, not ${volume.data.length}`);
  });
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  const revision = await readRevision(dms, config, 'CognitePointCloudRevision');
  const writes: Write[] = [];
  const objects = await objectsOf(dms, assets, config.object3DSpace, writes);
  for (const [i, item] of body.items.entries()) {
    const properties = {
      object3D: objects.get(key(assets[i].ref)),
      model3D: revision.props.model3D,
      revisions: [revision.ref],
      volumeReferences: [item.volumeReference],
      volumeType: item.volume.type,
      formatVersion: item.volume.version,
      volume: item.volume.data,
    };
    writes.push({ instanceType: 'node', ...volumeRef(config.contextualizationSpace, revision.ref, item.volumeReference), sources: [{ source: view('CognitePointCloudVolume'), properties }] });
  }
  await dms.write(writes);
  return {};
}

/** `POST /3d/contextualization/pointcloud/delete`: the volumes that show the asset's 3D object go. */
export async function unlinkVolumes(services: Services, project: { id: number; name: string }, token: string, body: PointCloudUnlinksBody) {
  const assets = body.items.map(pointCloudAsset);
  const dms = caller(services, project, token);
  const config = body.dmsContextualizationConfig;
  const revision = await readRevision(dms, config, 'CognitePointCloudRevision');
  const objects = await existingObjectsOf(dms, assets);
  const refs = body.items.map((item) => volumeRef(config.contextualizationSpace, revision.ref, item.volumeReference));
  const found = await dms.nodes(refs, 'CognitePointCloudVolume');
  const gone = body.items.flatMap((_, i) => {
    const object = objects.get(key(assets[i].ref));
    const props = found.get(key(refs[i]));
    return object && props && same(props.object3D, object) ? [{ instanceType: 'node' as const, ...refs[i] }] : [];
  });
  await dms.delete(gone);
  return {};
}
