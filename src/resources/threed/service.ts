/**
 * 3D: the area's own rules on top of the shared item operations. A revision is made from an uploaded file
 * and processed by a durable job (processing.ts); node endpoints answer only for a revision whose processing
 * is `Done`. Asset mappings tie a node of a processed revision to an asset id (which the reference does not
 * check either); a revision counts its mappings. Whatever a revision holds beyond its row (nodes, their
 * properties, mappings, logs, 3D files and their blobs) goes with it, or with its model.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { badRequest, formatPath, missingItems } from '../../http/errors.js';
import { EncodedBody, JsonText } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { scopeCondition } from '../../auth/access.js';
import { and, equalsLeaf, inLeaf, propertyTarget } from '../../query/basic.js';
import type { FilterNode, LeafNode } from '../../query/filter.js';
import { allocateIds } from '../../storage/ids.js';
import { insertRows, type Item } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { createItems, fromModel, getItem, inWrite, listItems, listItemsJson, underParent, upsertItems, type Path, type ResourceSpec } from '../crud.js';
import { pageOf, readCursor } from './jobs.js';
import { dataSetCatalog } from '../datasets/model.js';
import { openContent } from '../files/content.js';
import { mappingModel, nodeModel, revisionModel, THREED_LIMITS, threedModel, type BoundingBox, type RevisionStatus } from './model.js';
import type { FilterMappingsBody, FilterNodesBody, ListMappingsQuery, ListNodesQuery, MappingCreate, ModelCreate, NodesInBoxBody, RevisionCreate } from './schema.js';
import { isObject } from '../../http/validation.js';

export const PROCESS_KIND = 'threed.process';

export interface ProcessPayload {
  revisionId: number;
  /** The blob of the file's content when the revision was made. */
  blobKey: string;
}

export const modelSpec: ResourceSpec<ModelCreate> = {
  ...fromModel(threedModel),
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],
  async beforeDelete(ids, { db, projectId, services }) {
    const revisions = await db.all<{ id: number }>(sql`SELECT id FROM threed_revisions WHERE project_id = ${projectId} AND model_id IN (${ids})`);
    await releaseRevisions(db, services, projectId, revisions.map((r) => Number(r.id)));
  },
};

export const revisionSpec: ResourceSpec<RevisionCreate> = {
  ...fromModel(revisionModel),
  createValues: (item) => ({ status: 'Queued', published: item.published ?? false, assetMappingCount: 0 }),
  beforeDelete: (ids, { db, projectId, services }) => releaseRevisions(db, services, projectId, ids),
};

export const nodeSpec: ResourceSpec<unknown> = fromModel(nodeModel);
export const mappingSpec: ResourceSpec<unknown> = fromModel(mappingModel);

/** A new blob key for a file of the revision. */
export const threedBlobKey = (revisionId: number) => `threed/${revisionId}/${randomBytes(12).toString('base64url')}`;

/**
 * In the write that deletes revisions: deletes what they hold beyond their rows, in bulk (the shared delete
 * would go node by node), and deletes their blobs once the write has committed.
 */
async function releaseRevisions(db: Queryable, services: Services, projectId: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const keys = await db.all<{ key: string }>(sql`SELECT blob_key AS key FROM threed_files WHERE project_id = ${projectId} AND revision_id IN (${ids}) AND blob_key IS NOT NULL`);
  for (const table of ['threed_node_properties', 'threed_nodes', 'threed_asset_mappings', 'threed_revision_logs', 'threed_files']) {
    await db.run(sql`DELETE FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND revision_id IN (${ids})`);
  }
  const blobs = services.blobs;
  if (blobs && keys.length) db.afterCommit(() => void Promise.allSettled(keys.map((k) => blobs.delete(projectId, k.key))));
}

/** The revisions of model `modelId`: a 400 naming it when there is no such model (or the request does not see it). */
export function revisionsOf(services: Services, projectId: number, modelId: number) {
  return underParent(revisionSpec, modelSpec as ResourceSpec<unknown>, services, projectId, { id: modelId });
}

/** Revision `revisionId` of model `modelId`, as a by-id read answers an unknown one (400 with `missing`). */
export async function revisionOf(services: Services, projectId: number, modelId: number, revisionId: number): Promise<Item> {
  const spec = await revisionsOf(services, projectId, modelId);
  // By reference, not by bare id: a reference is looked up under the model only.
  return getItem(spec as ResourceSpec<unknown>, services, projectId, { id: revisionId });
}

export function createModels(services: Services, projectId: number, items: readonly ModelCreate[]) {
  return createItems(modelSpec, services, projectId, items);
}

/**
 * Models, with `published`: only those with (or without) a published revision; with `includeRevisionInfo`,
 * each with `lastRevisionInfo`, its latest revision (status, id, creation time, the model's count of
 * revisions, the output formats it has as `format:version`).
 */
export async function listModels(services: Services, projectId: number, query: { limit?: number; cursor?: string; published?: boolean; includeRevisionInfo?: boolean }) {
  const published = publishedModels(projectId);
  const node: FilterNode | undefined = query.published === undefined ? undefined : query.published ? published : { op: 'not', arg: published };
  const page = { limit: query.limit, cursor: query.cursor };
  if (!query.includeRevisionInfo) return listItemsJson(modelSpec as ResourceSpec<unknown>, services, projectId, page, node);
  const listed = await listItems(modelSpec as ResourceSpec<unknown>, services, projectId, page, node);
  const ids = listed.items.map((m) => m.id);
  const revisions = ids.length
    ? await services.db.all<{ model_id: number; id: number; status: string; created_time: number }>(
        sql`SELECT model_id, id, status, created_time FROM threed_revisions WHERE project_id = ${projectId} AND model_id IN (${ids}) ORDER BY created_time, id`,
      )
    : [];
  const formats = revisions.length
    ? await services.db.all<{ revision_id: number; format: string }>(
        sql`SELECT revision_id, format FROM threed_files WHERE project_id = ${projectId} AND revision_id IN (${revisions.map((r) => r.id)}) AND format IS NOT NULL`,
      )
    : [];
  const info = new Map<number, Record<string, unknown>>();
  for (const r of revisions) {
    const count = ((info.get(Number(r.model_id))?.revisionCount as number | undefined) ?? 0) + 1;
    const types = formats.filter((f) => Number(f.revision_id) === Number(r.id)).map((f) => `${f.format}:1`);
    info.set(Number(r.model_id), { status: r.status, revisionId: Number(r.id), createdTime: Number(r.created_time), revisionCount: count, types });
  }
  const items = listed.items.map((m) => (info.has(m.id) ? { ...m, lastRevisionInfo: info.get(m.id) } : m));
  return listed.nextCursor ? { items, nextCursor: listed.nextCursor } : { items };
}

function publishedModels(projectId: number): LeafNode {
  return { op: 'inSet', target: propertyTarget(threedModel.catalog, 'id'), ids: sql`SELECT model_id FROM threed_revisions WHERE project_id = ${projectId} AND published = 1` };
}

/**
 * Creates revisions of files the request sees and has uploaded, and starts processing each. The files are
 * read before the write (a blob store may be the database itself, which a write holds).
 */
export async function createRevisions(services: Services, projectId: number, modelId: number, items: readonly RevisionCreate[]) {
  await revisionsOf(services, projectId, modelId);
  const sources: string[] = [];
  for (const [i, item] of items.entries()) {
    const path = ['items', i, 'fileId'];
    const content = await openContent(services, projectId, { id: item.fileId! }, path);
    if (content.size > THREED_LIMITS.sourceBytes) throw badRequest(`${formatPath(path)}: the file has ${content.size} bytes; a revision is made of a file of at most ${THREED_LIMITS.sourceBytes}`);
    sources.push((content.file as Item & { blobKey: string }).blobKey);
  }
  return inWrite(services, async (services) => {
    const created = await createItems(await revisionsOf(services, projectId, modelId), services, projectId, items);
    for (const [i, revision] of created.entries()) {
      const payload: ProcessPayload = { revisionId: revision.id, blobKey: sources[i] };
      await services.jobs!.start(services.db, { projectId, kind: PROCESS_KIND, payload });
    }
    return created;
  });
}

export function listRevisions(services: Services, projectId: number, spec: ResourceSpec<unknown>, query: { limit?: number; cursor?: string; published?: boolean }) {
  return listItemsJson(spec, services, projectId, { limit: query.limit, cursor: query.cursor }, equalsLeaf(revisionModel.catalog, 'published', query.published === undefined ? undefined : Number(query.published)));
}

/** The nodes of a revision whose processing is done; a 400 saying so otherwise. */
export async function nodesOf(services: Services, projectId: number, modelId: number, revisionId: number): Promise<ResourceSpec<unknown>> {
  const revision = await revisionOf(services, projectId, modelId, revisionId);
  const status = revision.status as RevisionStatus;
  if (status === 'Failed') throw badRequest(`Processing of the revision ${revisionId} failed, so it has no nodes; its logs say why`);
  if (status !== 'Done') throw badRequest(`Processing of the revision ${revisionId} is not complete (its status is ${status}); its nodes can be read once its status is Done`);
  return { ...nodeSpec, parentId: revision.id };
}


/** The `properties` query parameter: a JSON object of categories of properties, each with one value. */
function propertiesQuery(text: string): Record<string, Record<string, string[]>> {
  const fail = (why: string) => badRequest(`query.properties: ${why}, such as {"category":{"property":"value"}}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw fail('expected a JSON object');
  }
  if (!isObject(parsed)) throw fail('expected a JSON object');
  const out: Record<string, Record<string, string[]>> = {};
  for (const [category, properties] of Object.entries(parsed)) {
    if (!isObject(properties)) throw fail(`the category ${JSON.stringify(category)} must be an object of properties`);
    out[category] = {};
    for (const [key, value] of Object.entries(properties)) {
      if (typeof value !== 'string') throw fail(`the property ${JSON.stringify(`${category}.${key}`)} must have a string value`);
      out[category][key] = [value];
    }
  }
  return out;
}

/** Nodes that have, for each property, one of its values. */
function propertiesNode(projectId: number, revisionId: number, filter: Record<string, Record<string, string[]>> | undefined, path: Path): FilterNode | undefined {
  if (!filter) return undefined;
  const leaves: LeafNode[] = [];
  let values = 0;
  for (const [category, properties] of Object.entries(filter)) {
    for (const [key, allowed] of Object.entries(properties)) {
      values += allowed.length;
      const ids = sql`SELECT node_id FROM threed_node_properties WHERE project_id = ${projectId} AND revision_id = ${revisionId} AND category = ${category} AND ${Sql.raw('key')} = ${key} AND value IN (${allowed})`;
      leaves.push({ op: 'inSet', target: propertyTarget(nodeModel.catalog, 'id'), ids });
    }
  }
  if (values > THREED_LIMITS.propertyValues) throw badRequest(`${formatPath(path)}: ${values} property values; a filter lists at most ${THREED_LIMITS.propertyValues} in all`);
  return and(leaves);
}

const TREE_ORDER = [{ property: ['treeIndex'] }];

/** `GET .../nodes`: a subtree (the whole tree by default) to a depth, in tree order or by node id. */
export async function listNodes(services: Services, projectId: number, spec: ResourceSpec<unknown>, query: ListNodesQuery): Promise<JsonText> {
  if (query.partition !== undefined && !query.sortByNodeId) throw badRequest('query.partition: partitions are given only with sortByNodeId=true');
  const catalog = nodeModel.catalog;
  let subtree: FilterNode | undefined;
  if (query.nodeId !== undefined || query.depth !== undefined) {
    const base =
      query.nodeId === undefined
        ? { treeIndex: 0, subtreeSize: Number.MAX_SAFE_INTEGER, depth: 0 }
        : ((await getItem(spec, services, projectId, { id: query.nodeId })) as Item & { treeIndex: number; subtreeSize: number; depth: number });
    subtree = and([
      { op: 'range', target: propertyTarget(catalog, 'treeIndex'), gte: base.treeIndex, lte: base.treeIndex + base.subtreeSize - 1 },
      query.depth === undefined ? undefined : { op: 'range', target: propertyTarget(catalog, 'depth'), lte: base.depth + query.depth },
    ]);
  }
  const properties = query.properties === undefined ? undefined : propertiesQuery(query.properties);
  const node = and([subtree, propertiesNode(projectId, spec.parentId!, properties, ['query', 'properties'])]);
  return listItemsJson(spec, services, projectId, { limit: query.limit, cursor: query.cursor, partition: query.partition, sort: query.sortByNodeId ? undefined : TREE_ORDER }, node);
}

/** `POST .../nodes/list`: nodes with any of the names, and with the properties' values. */
export function filterNodes(services: Services, projectId: number, spec: ResourceSpec<unknown>, body: FilterNodesBody): Promise<JsonText> {
  const names = body.filter?.names;
  const node = and([
    inLeaf(nodeModel.catalog, 'name', names),
    propertiesNode(projectId, spec.parentId!, body.filter?.properties, ['filter', 'properties']),
  ]);
  return listItemsJson(spec, services, projectId, { limit: body.limit, cursor: body.cursor, partition: body.partition }, node);
}

/** The node and the nodes above it, from the root down. */
export async function listAncestors(services: Services, projectId: number, spec: ResourceSpec<unknown>, nodeId: number, query: { limit?: number; cursor?: string }) {
  const node = (await getItem(spec, services, projectId, { id: nodeId })) as Item & { treeIndex: number };
  const ids = sql`SELECT id FROM threed_nodes WHERE project_id = ${projectId} AND revision_id = ${spec.parentId!} AND tree_index <= ${node.treeIndex} AND tree_index + subtree_size > ${node.treeIndex}`;
  return listItemsJson(spec, services, projectId, { limit: query.limit, cursor: query.cursor, sort: TREE_ORDER }, { op: 'inSet', target: propertyTarget(nodeModel.catalog, 'id'), ids });
}

/** Sets a revision's count of asset mappings from its mappings, in the write that changed them. */
async function recountMappings(db: Queryable, projectId: number, revisionId: number) {
  await db.run(
    sql`UPDATE threed_revisions SET asset_mapping_count = (SELECT count(*) FROM threed_asset_mappings WHERE project_id = ${projectId} AND revision_id = ${revisionId}) WHERE project_id = ${projectId} AND id = ${revisionId}`,
  );
}

const MAPPING_FIELDS = ['nodeId', 'assetId', 'treeIndex', 'subtreeSize'];
const mappingAnswer = (item: Item) => Object.fromEntries(MAPPING_FIELDS.map((f) => [f, item[f]]));

/** Maps nodes of a processed revision to assets; a mapping that exists already is answered as it is. */
export function createMappings(services: Services, projectId: number, modelId: number, revisionId: number, items: readonly MappingCreate[]) {
  return inWrite(services, async (services) => {
    const nodes = await nodesOf(services, projectId, modelId, revisionId);
    const ids = [...new Set(items.map((m) => m.nodeId))];
    const rows = await services.db.all<{ id: number; tree_index: number; subtree_size: number }>(
      sql`SELECT id, tree_index, subtree_size FROM threed_nodes WHERE project_id = ${projectId} AND revision_id = ${revisionId} AND id IN (${ids})`,
    );
    const found = new Map(rows.map((r) => [Number(r.id), r]));
    const values = items.map((m, i) => {
      const node = found.get(m.nodeId);
      if (!node) throw badRequest(`${formatPath(['items', i, 'nodeId'])}: the revision ${revisionId} has no node ${m.nodeId}`);
      return { nodeId: m.nodeId, assetId: m.assetId, treeIndex: Number(node.tree_index), subtreeSize: Number(node.subtree_size) };
    });
    const created = await upsertItems({ ...mappingSpec, parentId: nodes.parentId }, services, projectId, values);
    await recountMappings(services.db, projectId, revisionId);
    return created.map(mappingAnswer);
  });
}

export function deleteMappings(services: Services, projectId: number, modelId: number, revisionId: number, items: ReadonlyArray<{ nodeId: number; assetId: number }>) {
  return inWrite(services, async (services) => {
    const revision = await revisionOf(services, projectId, modelId, revisionId);
    const keys = items.map((m) => ({ nodeId: m.nodeId, assetId: m.assetId }));
    const gone: typeof keys = [];
    for (const key of keys) {
      const row = await services.db.get(
        sql`SELECT 1 AS found FROM threed_asset_mappings WHERE project_id = ${projectId} AND revision_id = ${revision.id} AND node_id = ${key.nodeId} AND asset_id = ${key.assetId}`,
      );
      if (!row) gone.push(key);
    }
    if (gone.length) throw missingItems(gone);
    for (const key of keys) {
      await services.db.run(sql`DELETE FROM threed_asset_mappings WHERE project_id = ${projectId} AND revision_id = ${revision.id} AND node_id = ${key.nodeId} AND asset_id = ${key.assetId}`);
    }
    await recountMappings(services.db, projectId, revision.id);
  });
}

/** The assets whose mapped nodes' boxes, together, intersect `box`. */
async function assetsIntersecting(db: Queryable, projectId: number, revisionId: number, box: BoundingBox): Promise<number[]> {
  const rows = await db.all<{ asset_id: number; bounding_box: string | null }>(
    sql`SELECT m.asset_id, n.bounding_box FROM threed_asset_mappings m JOIN threed_nodes n ON n.project_id = m.project_id AND n.id = m.node_id WHERE m.project_id = ${projectId} AND m.revision_id = ${revisionId}`,
  );
  const boxes = new Map<number, BoundingBox>();
  for (const r of rows) {
    if (!r.bounding_box) continue;
    const b = JSON.parse(r.bounding_box) as BoundingBox;
    const had = boxes.get(Number(r.asset_id));
    boxes.set(Number(r.asset_id), had ? { min: had.min.map((v, i) => Math.min(v, b.min[i])), max: had.max.map((v, i) => Math.max(v, b.max[i])) } : b);
  }
  return [...boxes].filter(([, b]) => [0, 1, 2].every((i) => b.min[i] <= box.max[i] && b.max[i] >= box.min[i])).map(([id]) => id);
}

function boxQuery(text: string): BoundingBox {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const vector = (v: unknown) => Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!isObject(parsed) || !vector(parsed.min) || !vector(parsed.max)) {
    throw badRequest('query.intersectsBoundingBox: expected {"min":[x,y,z],"max":[x,y,z]}; max and min must have length 3');
  }
  return parsed as BoundingBox;
}

// An empty list matches nothing (`in` of no values).
const anyOf = (field: string, values: number[] | undefined) => inLeaf(mappingModel.catalog, field, values);

async function mappingsOf(services: Services, projectId: number, modelId: number, revisionId: number): Promise<ResourceSpec<unknown>> {
  const revision = await revisionOf(services, projectId, modelId, revisionId);
  return { ...mappingSpec, parentId: revision.id };
}

/** `GET .../mappings`: by one of node, asset or an intersecting box. */
export async function listMappings(services: Services, projectId: number, modelId: number, revisionId: number, query: ListMappingsQuery) {
  const given = (['nodeId', 'assetId', 'intersectsBoundingBox'] as const).filter((k) => query[k] !== undefined);
  if (given.length > 1) throw badRequest(`query: give one of nodeId, assetId and intersectsBoundingBox, not ${given.join(' and ')}`);
  const spec = await mappingsOf(services, projectId, modelId, revisionId);
  let node: FilterNode | undefined;
  if (query.intersectsBoundingBox !== undefined) node = anyOf('assetId', await assetsIntersecting(services.db, projectId, spec.parentId!, boxQuery(query.intersectsBoundingBox)));
  else node = and([equalsLeaf(mappingModel.catalog, 'nodeId', query.nodeId), equalsLeaf(mappingModel.catalog, 'assetId', query.assetId)]);
  return listItemsJson(spec, services, projectId, { limit: query.limit, cursor: query.cursor }, node);
}

/** `POST .../mappings/list`: by asset ids, node ids or tree indexes. */
export async function filterMappings(services: Services, projectId: number, modelId: number, revisionId: number, body: FilterMappingsBody) {
  const spec = await mappingsOf(services, projectId, modelId, revisionId);
  const f = (body.filter ?? {}) as { assetIds?: number[]; nodeIds?: number[]; treeIndexes?: number[] };
  const node = and([anyOf('assetId', f.assetIds), anyOf('nodeId', f.nodeIds), anyOf('treeIndex', f.treeIndexes)]);
  return listItemsJson(spec, services, projectId, { limit: body.limit, cursor: body.cursor }, node);
}

/** The models, revisions and nodes an asset is mapped to, across the models the request sees, in pages. */
export async function nodesOfAsset(services: Services, projectId: number, assetId: number, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 100;
  const list = { list: '3d-asset-nodes', assetId };
  const after = readCursor(services, query.cursor, list);
  const scope = scopeCondition(services.access, threedModel.catalog);
  const rows = await services.db.all<{ rid: number; model_id: number; revision_id: number; node_id: number }>(
    sql`SELECT tam.id AS rid, tr.model_id, tam.revision_id, tam.node_id FROM threed_asset_mappings tam
        JOIN threed_revisions tr ON tr.project_id = tam.project_id AND tr.id = tam.revision_id
        JOIN threed_models tm ON tm.project_id = tr.project_id AND tm.id = tr.model_id
        WHERE tam.project_id = ${projectId} AND tam.asset_id = ${assetId} ${after ? sql`AND tam.id > ${after[0]}` : sql``} ${scope ? sql`AND ${scope}` : sql``}
        ORDER BY tam.id LIMIT ${limit + 1}`,
  );
  const { page, nextCursor } = pageOf(services, rows, limit, list, (r) => [Number(r.rid)]);
  const items = page.map((r) => ({ modelId: Number(r.model_id), revisionId: Number(r.revision_id), nodeId: Number(r.node_id) }));
  return nextCursor ? { items, nextCursor } : { items };
}

/** The revision's log entries of at least `severity` (5, warnings, unless given), oldest first. */
export async function revisionLogs(services: Services, projectId: number, revision: Item, severity = 5) {
  const rows = await services.db.all<{ timestamp: number; severity: number; type: string; info: string | null }>(
    sql`SELECT timestamp, severity, type, info FROM threed_revision_logs WHERE project_id = ${projectId} AND revision_id = ${revision.id} AND severity >= ${severity} ORDER BY id`,
  );
  return { items: rows.map((r) => ({ timestamp: Number(r.timestamp), severity: Number(r.severity), type: r.type, ...(r.info === null ? {} : { info: r.info }) })) };
}

/** What processing produced, each output with the 3D file (or directory) holding it. */
export async function revisionOutputs(services: Services, projectId: number, revision: Item, format?: string) {
  const wanted = format === undefined || format === 'all-outputs' ? undefined : format;
  const rows = await services.db.all<{ id: number; format: string }>(
    sql`SELECT id, format FROM threed_files WHERE project_id = ${projectId} AND revision_id = ${revision.id} AND format IS NOT NULL ${wanted ? sql`AND format = ${wanted}` : sql``} ORDER BY id`,
  );
  return { items: rows.map((r) => ({ format: r.format, version: 1, blobId: Number(r.id) })) };
}

/** A 3D file of a model the request sees: by id, or by name within a directory. */
export async function threedFile(services: Services, projectId: number, id: number, subPath?: string): Promise<EncodedBody> {
  const scope = scopeCondition(services.access, threedModel.catalog);
  const where = subPath === undefined ? sql`f.id = ${id}` : sql`f.directory = ${id} AND f.name = ${subPath}`;
  const row = await services.db.get<{ blob_key: string | null; mime_type: string | null }>(
    sql`SELECT f.blob_key, f.mime_type FROM threed_files f
        JOIN threed_revisions tr ON tr.project_id = f.project_id AND tr.id = f.revision_id
        JOIN threed_models tm ON tm.project_id = tr.project_id AND tm.id = tr.model_id
        WHERE f.project_id = ${projectId} AND ${where} ${scope ? sql`AND ${scope}` : sql``}`,
  );
  const name = subPath === undefined ? `The 3D file ${id}` : `The 3D directory ${id} has no file ${JSON.stringify(subPath)}, or it`;
  if (!row) throw badRequest(`${name} does not exist`);
  if (!row.blob_key) throw badRequest(`The 3D file ${id} is a directory: name a file in it (/3d/files/${id}/{subPath})`);
  const content = await services.blobs!.get(projectId, row.blob_key);
  if (!content) throw badRequest(`${name} has no content any more`);
  return new EncodedBody(row.mime_type ?? 'application/octet-stream', await readAll(content));
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const IMAGE_TYPES: ReadonlyArray<{ mime: string; magic: Buffer }> = [
  { mime: 'image/png', magic: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mime: 'image/jpeg', magic: Buffer.from([0xff, 0xd8, 0xff]) },
];

/**
 * Makes a copy of an uploaded JPEG or PNG file the revision's thumbnail, replacing the one it had. The copy
 * is stored before the write that names it (a blob store may be the database, which a write holds), and
 * deleted again if that write does not commit.
 */
export async function setThumbnail(services: Services, projectId: number, projectName: string, modelId: number, revisionId: number, fileId: number) {
  const blobs = services.blobs!;
  const revision = await revisionOf(services, projectId, modelId, revisionId);
  const path = ['fileId'];
  const content = await openContent(services, projectId, { id: fileId }, path);
  if (content.size > THREED_LIMITS.thumbnailBytes) throw badRequest(`${formatPath(path)}: the file has ${content.size} bytes; a thumbnail has at most ${THREED_LIMITS.thumbnailBytes}`);
  const bytes = await readAll(await content.open());
  const type = IMAGE_TYPES.find((t) => bytes.subarray(0, t.magic.length).equals(t.magic));
  if (!type) throw badRequest(`${formatPath(path)}: the file is not a JPEG or PNG image; thumbnails are`);
  const key = threedBlobKey(revision.id);
  await blobs.put(projectId, key, Readable.from([bytes]), { maxBytes: THREED_LIMITS.thumbnailBytes });
  try {
    await inWrite(services, async (services) => {
      const { db } = services;
      const current = await revisionOf(services, projectId, modelId, revisionId);
      const old = await db.all<{ id: number; blob_key: string }>(
        sql`SELECT id, blob_key FROM threed_files WHERE project_id = ${projectId} AND id = ${(current.thumbnailThreedFileId as number | undefined) ?? 0}`,
      );
      const id = await insertThreedFile(db, projectId, { revisionId: revision.id, mimeType: type.mime, blobKey: key });
      await db.run(sql`DELETE FROM threed_files WHERE project_id = ${projectId} AND id IN (${old.map((o) => o.id).concat([0])})`);
      const url = `${services.publicUrl ?? ''}/api/v1/projects/${projectName}/3d/files/${id}`;
      await db.run(sql`UPDATE threed_revisions SET thumbnail_threed_file_id = ${id}, thumbnail_url = ${url} WHERE project_id = ${projectId} AND id = ${revision.id}`);
      db.afterCommit(() => void Promise.allSettled(old.map((o) => blobs.delete(projectId, o.blob_key))));
    });
  } catch (error) {
    await blobs.delete(projectId, key).catch(() => {});
    throw error;
  }
  return {};
}

/** Adds a 3D file (or, without a blob, a directory) to a revision, returning its id. */
export async function insertThreedFile(
  db: Queryable,
  projectId: number,
  f: { revisionId: number; directory?: number; name?: string; format?: string; mimeType?: string; blobKey?: string },
): Promise<number> {
  const [id] = await allocateIds(db, 'threed_files', 1);
  await insertRows(db, 'threed_files', ['id', 'project_id', 'revision_id', 'directory', 'name', 'format', 'mime_type', 'blob_key'], [
    [id, projectId, f.revisionId, f.directory ?? null, f.name ?? null, f.format ?? null, f.mimeType ?? null, f.blobKey ?? null],
  ]);
  return id;
}

const CAD_REVISION_VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteCADRevision', version: 'v1' } as const;

/**
 * The revision a data modeling CAD revision names (`revisionId` of `cdf_cdm:CogniteCADRevision/v1`), read
 * through this API with the caller's own token, so that data modeling's scopes apply; it must belong to the
 * model the request names (`model3D`).
 */
async function cadRevision(services: Services, project: string, token: string, body: NodesInBoxBody): Promise<number> {
  const { instanceId } = body.revision;
  const res = await services.api!.call({
    project,
    credential: { token },
    method: 'POST',
    path: '/models/instances/byids',
    body: { items: [{ instanceType: 'node', ...instanceId }], sources: [{ source: CAD_REVISION_VIEW }] },
  });
  if (res.status !== 200) throw badRequest(`revision.instanceId: the CAD revision ${JSON.stringify(instanceId)} cannot be read (${JSON.stringify((res.body as { error?: unknown })?.error ?? res.status)})`);
  const [node] = (res.body as { items: Array<{ properties?: Record<string, Record<string, Record<string, unknown>>> }> }).items;
  const props = node?.properties?.cdf_cdm?.['CogniteCADRevision/v1'];
  if (!node) throw badRequest(`revision.instanceId: the CAD revision ${JSON.stringify(instanceId)} does not exist`);
  const model = props?.model3D as { space?: string; externalId?: string } | undefined;
  if (!model || model.space !== body.model.instanceId.space || model.externalId !== body.model.instanceId.externalId) {
    throw badRequest(`revision.instanceId: the CAD revision ${JSON.stringify(instanceId)} is not a revision of the model ${JSON.stringify(body.model.instanceId)}`);
  }
  if (typeof props?.revisionId !== 'number') throw badRequest(`revision.instanceId: the CAD revision ${JSON.stringify(instanceId)} has no revisionId`);
  return props.revisionId;
}

/** `POST /3d/nodes/list`: of the nodes named, those whose bounding box intersects the box, in tree order. */
export async function nodesInBox(services: Services, project: { id: number; name: string }, token: string, body: NodesInBoxBody) {
  const revisionId = await cadRevision(services, project.name, token, body);
  const row = await services.db.get<{ model_id: number }>(sql`SELECT model_id FROM threed_revisions WHERE project_id = ${project.id} AND id = ${revisionId}`);
  if (!row) throw badRequest(`revision.instanceId: the 3D revision ${revisionId} its CAD revision names does not exist`);
  const spec = await nodesOf(services, project.id, Number(row.model_id), revisionId);
  const { nodeIds, boundingBox: b } = body.filterNodesByBoundingBox;
  if (nodeIds.length === 0) return { items: [] };
  const rows = await services.db.all<{ id: number; tree_index: number; depth: number; name: string; subtree_size: number; bounding_box: string | null }>(
    sql`SELECT id, tree_index, depth, name, subtree_size, bounding_box FROM threed_nodes WHERE project_id = ${project.id} AND revision_id = ${spec.parentId!} AND id IN (${nodeIds}) ORDER BY tree_index`,
  );
  const min = [b.xMin, b.yMin, b.zMin];
  const max = [b.xMax, b.yMax, b.zMax];
  const items = rows.flatMap((r) => {
    if (!r.bounding_box) return [];
    const box = JSON.parse(r.bounding_box) as BoundingBox;
    if (![0, 1, 2].every((i) => box.min[i] <= max[i] && box.max[i] >= min[i])) return [];
    return [{ id: Number(r.id), treeIndex: Number(r.tree_index), depth: Number(r.depth), name: r.name, subtreeSize: Number(r.subtree_size), boundingBox: box }];
  });
  return { items };
}
