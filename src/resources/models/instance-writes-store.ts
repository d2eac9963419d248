/**
 * Applying and deleting instances, in one transaction per request: identities looked up in batches, version
 * checks (`existingVersion`), references to other nodes (type, edge ends, direct relations) found or created
 * as the auto-create flags allow, values merged (patch) or rewritten (replace) per container with defaults,
 * auto-increments and immutability, then the instance rows and container rows written in multi-row
 * statements. Uniqueness constraints are unique indexes of the container tables; `requires` constraints are
 * checked after the writes, and the hierarchies the service maintains (instance-hierarchy.ts) are brought
 * up to date. A version goes up by one only when something changed.
 */
import { describeScope, type Access } from '../../auth/access.js';
import { formatCapability } from '../../auth/principal.js';
import { ApiError, badRequest, forbidden, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { allocateIds } from '../../storage/ids.js';
import { Sql, sql, type SqlValue } from '../../storage/sql.js';
import type { ChangeFeed } from '../../storage/changes.js';
import type { Queryable } from '../../storage/store.js';
import { deleteManagedFiles } from '../files/instances.js';
import { deleteManagedSeries } from '../timeseries/instances.js';
import { claimChanges } from './changes.js';
import { containerRowKey, toColumn } from './container-tables.js';
import type { Constraint, ContainerDefinition } from './containers.js';
import { containerKey, fail, instanceKey, nodeKey, requireUserSpaces, type DirectRelationReference, type InstanceType, type Path } from './identifiers.js';
import { inUserSpace } from './global-instances.js';
import { hierarchyUpdates, maintainedProperties, MAINTAINED_HIERARCHIES, type HierarchyUpdate, type HierarchyWriter } from './instance-hierarchy.js';
import type { ApplyInstancesBody, InstanceDeleteItem } from './instance-schema.js';
import { FILE_CONTAINERS, syncFilesOfNodes } from './instance-files.js';
import { SERIES_CONTAINERS, syncSeriesOfNodes } from './instance-timeseries.js';
import { normalizeInstanceApply, requiredMissing, valuesForNewData, type InstanceWrite } from './instance-writes.js';
import { requireWithinLimit } from '../project-limits.js';
import { projectLimits } from './limits.js';
import { isList } from './property-types.js';
import { existingSpaces, readSchema, type ProjectSchema, type StoredContainer } from './schema-store.js';
import { INSTANCES_ACL, inInstanceReadScope, requireEffectWritable, requireSpacesWritable, schemaSpaces } from './space-access.js';
import { decodeRef, encodeRef } from './store-schema.js';
import type { StoredValue } from './values.js';
import { modelsSettings } from './settings.js';

export interface InstanceRow {
  id: number;
  space: string;
  kind: number;
  external_id: string;
  type_ref: string | null;
  start_ref: string | null;
  end_ref: string | null;
  version: number;
  created_time: number;
  last_updated_time: number;
  deleted_time: number | null;
}

export const INSTANCE_COLUMNS = 'id, space, kind, external_id, type_ref, start_ref, end_ref, version, created_time, last_updated_time, deleted_time';

export const kindOf = (t: InstanceType): number => (t === 'node' ? 0 : 1);
export const typeOf = (kind: number): InstanceType => (kind === 0 ? 'node' : 'edge');

const rowKey = (r: { kind: number; space: string; external_id: string }) => `${typeOf(r.kind)}:${r.space}:${r.external_id}`;

/** The rows (live and tombstones) of the instances named, by `instanceKey`. */
export async function findInstances(
  db: Pick<Queryable, 'all'>,
  projectId: number,
  ids: ReadonlyArray<{ instanceType: InstanceType; space: string; externalId: string }>,
): Promise<Map<string, InstanceRow>> {
  const out = new Map<string, InstanceRow>();
  for (const kind of ['node', 'edge'] as const) {
    const wanted = [...new Map(ids.filter((i) => i.instanceType === kind).map((i) => [instanceKey(i), i])).values()];
    for (let at = 0; at < wanted.length; at += 500) {
      const chunk = wanted.slice(at, at + 500);
      const rows = await db.all<InstanceRow>(
        sql`SELECT ${Sql.raw(INSTANCE_COLUMNS)} FROM dm_instances WHERE project_id = ${projectId} AND kind = ${kindOf(kind)} AND (space, external_id) IN (VALUES ${Sql.join(
          chunk.map((i) => sql`(${i.space}, ${i.externalId})`),
          ', ',
        )})`,
      );
      for (const r of rows) out.set(rowKey(r), r);
    }
  }
  return out;
}

/**
 * The containers each of the instances `ids` has data in (by container key), asked of every container table
 * in one statement per chunk of ids: a project's schema includes the core data model's tables, most of which
 * hold nothing of a given instance.
 */
export async function containersHolding(db: Pick<Queryable, 'all'>, projectId: number, schema: ProjectSchema, ids: readonly number[]): Promise<Map<number, string[]>> {
  const found = new Map<number, number[]>();
  const containers = [...schema.containers];
  if (ids.length === 0 || containers.length === 0) return new Map();
  // Each table's select binds the project and the chunk's ids; stay within the engines' parameter limits.
  const per = Math.max(1, Math.min(1000, Math.floor(30_000 / containers.length) - 1));
  for (let at = 0; at < ids.length; at += per) {
    const chunk = ids.slice(at, at + per);
    const selects = containers.map(([, c], i) => sql`SELECT ${Sql.raw(String(i))} AS c, instance_id FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId} AND instance_id IN (${chunk})`);
    for (const r of await db.all<{ c: number; instance_id: number }>(Sql.join(selects, ' UNION ALL '))) {
      const id = Number(r.instance_id);
      found.set(id, [...(found.get(id) ?? []), Number(r.c)]);
    }
  }
  // In the schema's order, whatever order the engine answered in.
  return new Map([...found].map(([id, cs]) => [id, cs.sort((x, y) => x - y).map((i) => containers[i][0])]));
}

/** Rows in multi-row INSERT statements, within the engines' parameter limits. */
async function insertRows(db: Queryable, table: string, columns: readonly string[], rows: readonly SqlValue[][], suffix: Sql = Sql.raw('')): Promise<void> {
  const per = Math.max(1, Math.floor(30_000 / columns.length));
  for (let at = 0; at < rows.length; at += per) {
    const chunk = rows.slice(at, at + per);
    await db.run(sql`INSERT INTO ${Sql.raw(table)} (${Sql.raw(columns.join(', '))}) VALUES ${Sql.join(chunk.map((r) => sql`(${r})`), ', ')}${suffix}`);
  }
}

const INSTANCE_UPSERT = Sql.raw(
  ' ON CONFLICT (project_id, space, kind, external_id) DO UPDATE SET type_ref = excluded.type_ref, start_ref = excluded.start_ref, end_ref = excluded.end_ref, ' +
    'version = excluded.version, created_time = excluded.created_time, last_updated_time = excluded.last_updated_time, deleted_time = excluded.deleted_time, change_seq = excluded.change_seq',
);
const INSTANCE_INSERT_COLUMNS = ['id', 'project_id', 'space', 'kind', 'external_id', 'type_ref', 'start_ref', 'end_ref', 'version', 'created_time', 'last_updated_time', 'deleted_time', 'change_seq'];

/** Writes instance rows, each at the next position of the project's change feed (in the order given). */
async function writeInstanceRows(db: Queryable, projectId: number, rows: readonly InstanceRow[]): Promise<void> {
  const first = (await claimChanges(db, projectId, rows.length)) - rows.length + 1;
  await insertRows(
    db,
    'dm_instances',
    INSTANCE_INSERT_COLUMNS,
    rows.map((r, n) => [r.id, projectId, r.space, r.kind, r.external_id, r.type_ref, r.start_ref, r.end_ref, r.version, r.created_time, r.last_updated_time, r.deleted_time, first + n]),
    INSTANCE_UPSERT,
  );
}

/** A container's values of some instances, in column form, by instance id. */
async function containerRows(db: Queryable, projectId: number, c: StoredContainer, ids: readonly number[]): Promise<Map<number, Record<string, SqlValue>>> {
  const out = new Map<number, Record<string, SqlValue>>();
  const props = Object.keys(c.definition.properties);
  const columns = props.map((p) => c.layout.columns[p]);
  for (let at = 0; at < ids.length; at += 1000) {
    const chunk = ids.slice(at, at + 1000);
    const rows = await db.all<Record<string, SqlValue>>(
      sql`SELECT instance_id${Sql.raw(columns.map((col) => `, ${col}`).join(''))} FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId} AND instance_id IN (${chunk})`,
    );
    for (const r of rows) {
      const values: Record<string, SqlValue> = {};
      props.forEach((p, i) => (values[p] = r[columns[i]] ?? null));
      out.set(Number(r.instance_id), values);
    }
  }
  return out;
}

const same = (a: SqlValue | undefined, b: SqlValue | undefined): boolean => (a ?? null) === (b ?? null) || (typeof a === 'number' && typeof b === 'number' && a === b);

const uniquenessViolated = (def: ContainerDefinition, id: string, properties: readonly string[]): ApiError =>
  new ApiError(409, `The uniqueness constraint ${JSON.stringify(id)} of the container ${containerKey(def)} is violated: another instance already has the same values of ${properties.join(', ')}`);

/** The message for a unique index that refused a write: the container and constraint it belongs to. */
function uniquenessConflict(schema: ProjectSchema, error: unknown): ApiError {
  const e = error as { message?: string; constraint?: string; cause?: { message?: string; constraint?: string } };
  const text = [e.message, e.constraint, e.cause?.message, e.cause?.constraint].filter(Boolean).join(' ');
  for (const c of schema.containers.values()) {
    for (const [id, name] of Object.entries(c.layout.constraints)) {
      const x = c.definition.constraints[id];
      if (x.constraintType !== 'uniqueness') continue;
      const columns = x.properties.map((p) => `${c.layout.table}.${c.layout.columns[p]}`).join(', ');
      if (text.includes(name) || text.includes(columns)) return uniquenessViolated(c.definition, id, x.properties);
    }
  }
  return new ApiError(409, 'A uniqueness constraint is violated: another instance already has the same values');
}

/**
 * Values a write gives a uniqueness constraint whose database index is not unique: one added to a container
 * whose stored instances already shared values (its state `failed`), which keeps new values unique all the
 * same. Values kept as they were and values with a null take nothing.
 */
interface UniqueValues {
  c: StoredContainer;
  id: string;
  space: string;
  values: SqlValue[];
}

function uniqueValuesToCheck(c: StoredContainer, space: string, before: Record<string, SqlValue> | undefined, next: Record<string, SqlValue>): UniqueValues[] {
  const out: UniqueValues[] = [];
  for (const [id, x] of Object.entries(c.definition.constraints)) {
    if (x.constraintType !== 'uniqueness' || c.states.constraints?.[id] !== 'failed') continue;
    if (x.properties.some((p) => next[p] === null || next[p] === undefined)) continue;
    if (before && x.properties.every((p) => same(before[p], next[p]))) continue;
    out.push({ c, id, space, values: x.properties.map((p) => next[p]) });
  }
  return out;
}

/** Values checked per statement: each is a condition on the constraint's index. */
const UNIQUE_CHECK_BATCH = 200;

/** A 409 when, after the writes, another instance holds values a write gave a failed uniqueness constraint. */
async function checkUniqueValues(db: Queryable, projectId: number, checks: readonly UniqueValues[]): Promise<void> {
  const groups = new Map<string, UniqueValues[]>();
  for (const check of checks) {
    const key = `${check.c.id}.${check.id}`;
    const group = groups.get(key);
    if (group) group.push(check);
    else groups.set(key, [check]);
  }
  for (const group of groups.values()) {
    const { c, id } = group[0];
    const x = c.definition.constraints[id] as Extract<Constraint, { constraintType: 'uniqueness' }>;
    const columns = [...(x.bySpace ? ['space'] : []), ...x.properties.map((p) => c.layout.columns[p])];
    for (let at = 0; at < group.length; at += UNIQUE_CHECK_BATCH) {
      const tuples = group.slice(at, at + UNIQUE_CHECK_BATCH).map((g) => (x.bySpace ? [g.space, ...g.values] : g.values));
      const matches = Sql.or(tuples.map((t) => Sql.and(t.map((v, i) => sql`${Sql.raw(columns[i])} = ${v}`))));
      const shared = await db.get(
        sql`SELECT 1 AS shared FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId} AND ${matches.wrap()} GROUP BY ${Sql.raw(columns.join(', '))} HAVING count(*) > 1 LIMIT 1`,
      );
      if (shared) throw uniquenessViolated(c.definition, id, x.properties);
    }
  }
}

/**
 * A principal that sees instances in some spaces only may not set the values of a uniqueness constraint that
 * holds across spaces: whether a value is taken would tell it of instances it cannot see. Values kept as they
 * are, nulls, and the numbers the service gives auto-incremented properties (past every value there is) take
 * nothing; a constraint declared `bySpace` holds within the instance's own space.
 */
function requireUniquenessInReach(
  reach: Access | undefined,
  def: ContainerDefinition,
  given: Readonly<Record<string, unknown>>,
  before: Record<string, SqlValue> | undefined,
  next: Record<string, SqlValue>,
  path: Path,
): void {
  if (reach === undefined || reach.all) return;
  const numbered = (p: string) => def.properties[p].autoIncrement && given[p] === undefined;
  for (const [id, x] of Object.entries(def.constraints)) {
    if (x.constraintType !== 'uniqueness' || x.bySpace) continue;
    const set = x.properties.filter((p) => !numbered(p) && next[p] !== null && next[p] !== undefined && !same(before?.[p], next[p]));
    if (set.length === 0) continue;
    throw forbidden(
      `${formatPath(path)}: the uniqueness constraint ${JSON.stringify(id)} of the container ${containerKey(def)} holds across all spaces, and this principal sees instances only in ${describeScope(reach)}; ` +
        `whether a value is taken would tell of instances it cannot see, so it may not set ${set.join(', ')} (a constraint declared with bySpace holds within each space)`,
    );
  }
}

interface Pending {
  row: InstanceRow;
  modified: boolean;
  /** Container rows to write (whole rows, in column form). */
  data: Map<string, Record<string, SqlValue>>;
}

/** Missing nodes as the 400 lists them. */
function missingNodes(refs: readonly DirectRelationReference[], what: string, flag: string): ApiError {
  const list = [...new Map(refs.map((r) => [nodeKey(r), r])).values()];
  return badRequest(
    `${what} ${list.map((r) => `${r.space}:${r.externalId}`).slice(0, 10).join(', ')}${list.length > 10 ? ` and ${list.length - 10} more` : ''} ${list.length === 1 ? 'does' : 'do'} not exist; create ${list.length === 1 ? 'it' : 'them'} first or set ${flag}`,
    { missing: list.map((r) => ({ instanceType: 'node', space: r.space, externalId: r.externalId })) },
  );
}

const named = (item: { instanceType: string; space: string; externalId: string }, path: Path) => ({ space: item.space, path, what: `the ${item.instanceType} ${item.space}:${item.externalId}` });

/**
 * A 403 when the request creates (or revives, or deletes) instances in a space where the principal may only
 * change the properties of existing ones (`dataModelInstancesAcl:WRITE_PROPERTIES` without `WRITE`).
 */
function requireCreatable(access: Access | undefined, targets: ReadonlyArray<{ space: string; path: Path; what: string }>): void {
  if (access === undefined || access.all) return;
  for (const { space, path, what } of targets) {
    if (access.spaces.includes(space)) continue;
    throw forbidden(
      `${formatPath(path)}: ${what} in the space ${JSON.stringify(space)} needs ${formatCapability(access.capability)} there` +
        `${access.spaces.length ? ` (granted only in ${describeScope(access)})` : ''}; dataModelInstancesAcl:WRITE_PROPERTIES changes the properties of existing instances only`,
    );
  }
}

/**
 * `createAccess` is where the request may create and delete instances (`dataModelInstancesAcl:WRITE`);
 * `services.access` is where it may change them at all (`WRITE` or `WRITE_PROPERTIES`). Absent, both are the same.
 */
export async function applyInstances(services: Services, projectId: number, body: ApplyInstancesBody, createAccess: Access | undefined = services.access) {
  requireUserSpaces([
    ...body.items.map((item, i) => named(item, ['items', i])),
    ...(body.delete ?? []).map((item, i) => named(item, ['delete', i])),
  ]);
  requireSpacesWritable(services.access, [
    ...body.items.map((item, i) => ({ space: item.space, path: ['items', i, 'space'] as Array<string | number> })),
    ...(body.delete ?? []).map((item, i) => ({ space: item.space, path: ['delete', i, 'space'] as Array<string | number> })),
  ]);
  const now = services.now();
  let schemaForErrors: ProjectSchema | undefined;
  try {
    return await services.db.transaction(async (db) => {
      await claimChanges(db, projectId, 0);
      const schema = await readSchema(db, projectId);
      schemaForErrors = schema;
      // The views and containers the request names are those the principal sees; writing keeps every container's rows.
      const apply = normalizeInstanceApply(body, schema.restrictedTo(schemaSpaces(services)).resolver);
      return await applyWithSchema(db, services, projectId, schema, apply, now, createAccess, true);
    });
  } catch (error) {
    if (schemaForErrors && services.db.dialect.isUniqueViolation(error)) throw uniquenessConflict(schemaForErrors, error);
    throw error;
  }
}

/**
 * Applies instances the service keeps itself (the unit nodes), in `db`'s transaction, through the same rules
 * as a request's, but in system spaces, with no principal's scope and outside the project's limits.
 */
export async function applySystemInstances(db: Queryable, services: Services, projectId: number, body: ApplyInstancesBody): Promise<void> {
  await claimChanges(db, projectId, 0);
  const schema = await readSchema(db, projectId);
  const apply = normalizeInstanceApply(body, schema.resolver);
  await applyWithSchema(db, { ...services, db, access: undefined, reach: undefined, dataSetOwner: undefined }, projectId, schema, apply, services.now(), undefined, false);
}

async function applyWithSchema(
  db: Queryable,
  services: Services,
  projectId: number,
  schema: ProjectSchema,
  apply: ReturnType<typeof normalizeInstanceApply>,
  now: number,
  createAccess: Access | undefined,
  checkLimits: boolean,
) {
  const { items, options } = apply;
  requireCreatable(createAccess, apply.delete.map((d, i) => ({ space: d.space, path: ['delete', i, 'space'], what: 'deleting an instance' })));
  // What the principal can see of instances: a node it refers to outside it is one that does not exist.
  const reach = services.reach?.(INSTANCES_ACL);

  // References to nodes: the type, edge ends and direct relation values.
  const refs = new Map<string, { ref: DirectRelationReference; flag: 'autoCreateDirectRelations' | 'autoCreateStartNodes' | 'autoCreateEndNodes'; container?: string }>();
  const mention = (ref: DirectRelationReference, flag: 'autoCreateDirectRelations' | 'autoCreateStartNodes' | 'autoCreateEndNodes', container?: string) => {
    const key = `${nodeKey(ref)}|${flag}|${container ?? ''}`;
    if (!refs.has(key)) refs.set(key, { ref, flag, container });
  };
  for (const item of items) {
    if (item.type) mention(item.type, 'autoCreateDirectRelations');
    if (item.startNode) mention(item.startNode, 'autoCreateStartNodes');
    if (item.endNode) mention(item.endNode, 'autoCreateEndNodes');
    for (const w of item.data) {
      const def = schema.container(w.container)!;
      for (const [p, v] of Object.entries(w.values)) {
        const t = def.properties[p].type;
        if (t.type !== 'direct' || v === null) continue;
        const target = t.container ? containerKey(t.container) : undefined;
        for (const r of (isList(t) ? v : [v]) as DirectRelationReference[]) mention(r, 'autoCreateDirectRelations', target);
      }
    }
  }

  const spaces = [...items.map((i) => i.space), ...apply.delete.map((d) => d.space)];
  const found = await existingSpaces(db, projectId, spaces);
  const unknownSpaces = [...new Set(spaces)].filter((s) => !found.has(s));
  if (unknownSpaces.length > 0) throw badRequest(`One or more spaces do not exist: ${unknownSpaces.join(', ')}`, { missing: unknownSpaces.map((space) => ({ space })) });

  const existing = await findInstances(db, projectId, [
    ...items,
    ...[...refs.values()].map(({ ref }) => ({ instanceType: 'node' as const, space: ref.space, externalId: ref.externalId })),
  ]);
  const live = (key: string) => {
    const r = existing.get(key);
    return r && r.deleted_time === null && inInstanceReadScope(reach, r.space) ? r : undefined;
  };

  // Version checks.
  const conflicts: InstanceWrite[] = [];
  const writes: InstanceWrite[] = [];
  for (const item of items) {
    const stored = live(instanceKey(item));
    if (item.existingVersion !== undefined && (item.existingVersion === 0 ? stored !== undefined : (stored?.version ?? 0) > item.existingVersion)) conflicts.push(item);
    else writes.push(item);
  }
  if (conflicts.length > 0 && !options.skipOnVersionConflict) {
    const c = conflicts[0];
    const stored = live(instanceKey(c));
    throw new ApiError(
      409,
      `items[${items.indexOf(c)}]: the ${c.instanceType} ${c.space}:${c.externalId} is at version ${stored?.version ?? 0}${stored ? '' : ' (it does not exist)'}, and the request expects version ${c.existingVersion}${
        conflicts.length > 1 ? ` (${conflicts.length - 1} more items conflict)` : ''
      }; read it again, or set skipOnVersionConflict`,
    );
  }

  requireCreatable(
    createAccess,
    writes.flatMap((w) => (live(instanceKey(w)) ? [] : [{ space: w.space, path: ['items', items.indexOf(w), 'space'], what: `creating the ${w.instanceType} ${JSON.stringify(w.externalId)}` }])),
  );

  // Nodes referenced that neither exist nor are written here.
  const writtenNodes = new Set(writes.filter((w) => w.instanceType === 'node').map((w) => nodeKey(w)));
  const toCreate = new Map<string, DirectRelationReference>();
  const missingBy: Record<string, DirectRelationReference[]> = {};
  const targetChecks: Array<{ ref: DirectRelationReference; container: string }> = [];
  for (const { ref, flag, container } of refs.values()) {
    if (container) targetChecks.push({ ref, container });
    if (writtenNodes.has(nodeKey(ref)) || live(`node:${nodeKey(ref)}`)) continue;
    if (options[flag] && !container) toCreate.set(nodeKey(ref), ref);
    else (missingBy[container ? 'target' : flag] ??= []).push(ref);
  }
  for (const [flag, list] of Object.entries(missingBy)) {
    if (flag === 'target') throw missingNodes(list, 'The direct relations point at nodes that must have data in the container their property names:', 'write those nodes first');
    const what = flag === 'autoCreateStartNodes' ? 'The start nodes' : flag === 'autoCreateEndNodes' ? 'The end nodes' : 'The nodes referenced (types and direct relations)';
    throw missingNodes(list, what, flag);
  }
  if (toCreate.size > 0) {
    const created = [...toCreate.values()];
    // Nodes of a system space are the service's: a reference to one that does not exist is not one to create.
    requireUserSpaces(created.map((r) => ({ space: r.space, path: ['items'], what: `the node ${r.space}:${r.externalId}, which the items refer to and which does not exist,` })));
    // The scope first: whether a space outside it exists is not for the principal to learn.
    requireSpacesWritable(services.access, created.map((r) => ({ space: r.space, path: ['items'] })));
    requireCreatable(createAccess, created.map((r) => ({ space: r.space, path: ['items'], what: `creating the node ${JSON.stringify(r.externalId)} that the items refer to` })));
    const createdSpaces = await existingSpaces(db, projectId, created.map((r) => r.space));
    const noSpace = [...new Set(created.map((r) => r.space))].filter((s) => !createdSpaces.has(s));
    if (noSpace.length > 0) throw badRequest(`Nodes would be created in spaces that do not exist: ${noSpace.join(', ')}`, { missing: noSpace.map((space) => ({ space })) });
  }

  // Ids for new instances (and revived tombstones keep theirs).
  const fresh = [...writes.filter((w) => !existing.has(instanceKey(w))).map((w) => instanceKey(w)), ...[...toCreate.values()].filter((r) => !existing.has(`node:${nodeKey(r)}`)).map((r) => `node:${nodeKey(r)}`)];
  const ids = await allocateIds(db, 'dm_instances', fresh.length);
  const idOf = new Map(fresh.map((k, i) => [k, ids[i]]));

  const pending = new Map<string, Pending>();
  for (const ref of toCreate.values()) {
    const key = `node:${nodeKey(ref)}`;
    const old = existing.get(key);
    pending.set(key, {
      row: {
        id: old?.id ?? idOf.get(key)!,
        space: ref.space,
        kind: 0,
        external_id: ref.externalId,
        type_ref: null,
        start_ref: null,
        end_ref: null,
        version: (old?.version ?? 0) + 1,
        created_time: now,
        last_updated_time: now,
        deleted_time: null,
      },
      modified: true,
      data: new Map(),
    });
  }

  // Stored values of the containers written, for patches and change detection.
  const stored = new Map<string, Map<number, Record<string, SqlValue>>>();
  const liveIds = writes.flatMap((w) => (live(instanceKey(w)) ? [live(instanceKey(w))!.id] : []));
  const touched = new Set(writes.flatMap((w) => [...w.data.map((d) => containerKey(d.container)), ...(options.replace ? w.reached.map(containerKey) : [])]));
  for (const key of touched) stored.set(key, liveIds.length ? await containerRows(db, projectId, schema.containers.get(key)!, liveIds) : new Map());

  const autoNext = new Map<string, number>();
  const nextAuto = async (c: StoredContainer, p: string): Promise<number> => {
    const key = `${c.id}.${p}`;
    let n = autoNext.get(key);
    if (n === undefined) {
      const row = await db.get<{ m: number | null }>(sql`SELECT max(${Sql.raw(c.layout.columns[p])}) AS m FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId}`);
      n = Number(row?.m ?? 0);
    }
    autoNext.set(key, n + 1);
    return n + 1;
  };

  const indexOf = new Map(items.map((item, i) => [item, i]));
  const results: Array<{ item: InstanceWrite; key: string }> = [];
  const uniqueChecks: UniqueValues[] = [];
  for (const item of writes) {
    const index = indexOf.get(item)!;
    const key = instanceKey(item);
    const old = existing.get(key);
    const current = live(key);
    const row: InstanceRow = {
      id: old?.id ?? idOf.get(key)!,
      space: item.space,
      kind: kindOf(item.instanceType),
      external_id: item.externalId,
      type_ref: item.type ? encodeRef(item.type) : (current?.type_ref ?? null),
      start_ref: item.startNode ? encodeRef(item.startNode) : null,
      end_ref: item.endNode ? encodeRef(item.endNode) : null,
      version: current?.version ?? (old ? old.version : 0),
      created_time: current?.created_time ?? now,
      last_updated_time: current?.last_updated_time ?? now,
      deleted_time: null,
    };
    let modified = !current || row.type_ref !== current.type_ref || row.start_ref !== current.start_ref || row.end_ref !== current.end_ref;
    const data = new Map<string, Record<string, SqlValue>>();
    const writesHere = new Map(item.data.map((d) => [containerKey(d.container), d.values]));
    const containers = options.replace ? new Set([...item.reached.map(containerKey), ...writesHere.keys()]) : new Set(writesHere.keys());
    for (const ckey of containers) {
      const c = schema.containers.get(ckey)!;
      const def: ContainerDefinition = c.definition;
      const given = writesHere.get(ckey) ?? {};
      const before = current ? stored.get(ckey)?.get(current.id) : undefined;
      let values: Record<string, StoredValue | null>;
      let next: Record<string, SqlValue>;
      if (!before || options.replace) {
        const missing = requiredMissing(def, given);
        if (missing.length > 0) {
          fail(['items', index], `the container ${ckey} needs values for ${missing.map((m) => JSON.stringify(m)).join(', ')} (not nullable, no default), which ${before ? 'replace rewrites' : 'new data there must have'}`);
        }
        values = valuesForNewData(def, given);
        next = {};
        for (const [p, prop] of Object.entries(def.properties)) {
          if (values[p] === undefined && prop.autoIncrement) next[p] = before?.[p] ?? (await nextAuto(c, p));
          else next[p] = toColumn(values[p], prop.type);
        }
        // What the service maintains is kept through a replace (and worked out after the writes).
        for (const p of maintainedProperties(def)) next[p] = before?.[p] ?? null;
      } else {
        next = { ...before };
        for (const [p, v] of Object.entries(given)) next[p] = toColumn(v, def.properties[p].type);
      }
      if (before) {
        for (const [p, prop] of Object.entries(def.properties)) {
          if (prop.immutable && before[p] !== null && before[p] !== undefined && !same(before[p], next[p])) {
            fail(['items', index], `the property ${JSON.stringify(p)} of the container ${ckey} is immutable and already has a value`);
          }
        }
      }
      requireUniquenessInReach(reach, def, given, before, next, ['items', index]);
      uniqueChecks.push(...uniqueValuesToCheck(c, item.space, before, next));
      if (!before || Object.keys(def.properties).some((p) => !same(before[p], next[p]))) {
        modified = true;
        data.set(ckey, next);
      }
    }
    if (modified) {
      row.version = (current?.version ?? old?.version ?? 0) + 1;
      row.last_updated_time = now;
      if (!current) row.created_time = now;
    }
    pending.set(key, { row, modified, data });
    results.push({ item, key });
  }

  const deleted = await deleteRows(db, projectId, schema, apply.delete, now, { list: 'delete', access: createAccess, spacesChecked: true, blobs: services.blobs, changes: services.changes });

  const changedRows = [...pending.values()].filter((p) => p.modified).map((p) => p.row);
  if (changedRows.length > 0) await writeInstanceRows(db, projectId, changedRows);
  for (const [ckey, c] of schema.containers) {
    const rows = [...pending.values()].filter((p) => p.data.has(ckey));
    if (rows.length === 0) continue;
    const props = Object.keys(c.definition.properties);
    const columns = props.map((p) => c.layout.columns[p]);
    await insertRows(
      db,
      c.layout.table,
      ['project_id', 'space', 'instance_id', ...columns],
      rows.map((p) => {
        const values = p.data.get(ckey)!;
        return [projectId, p.row.space, p.row.id, ...props.map((prop) => values[prop] ?? null)];
      }),
      columns.length
        ? Sql.raw(` ON CONFLICT ${containerRowKey(db.dialect)} DO UPDATE SET ${columns.map((col) => `${col} = excluded.${col}`).join(', ')}`)
        : Sql.raw(` ON CONFLICT ${containerRowKey(db.dialect)} DO NOTHING`),
    );
  }

  const writtenThere = new Map(
    MAINTAINED_HIERARCHIES.map((h) => containerKey(h.container)).map((ckey) => [ckey, [...pending.values()].filter((p) => p.data.has(ckey)).map((p) => p.row.id)]),
  );
  const writer: HierarchyWriter = { place: (n) => placeOf(n, { items, delete: apply.delete }), sees: reach, writes: services.access };
  await maintainHierarchies(db, projectId, schema, writtenThere, deletedNodes(deleted), now, writer, pending);

  await refreshStatistics(db, [
    { table: 'dm_instances', added: changedRows.filter((r) => r.version === 1).length },
    ...[...schema.containers].map(([ckey, c]) => ({ table: c.layout.table, added: [...pending.values()].filter((p) => p.data.has(ckey)).length })),
  ]);
  await checkUniqueValues(db, projectId, uniqueChecks);
  await checkRequires(db, projectId, schema, pending, items);
  await checkTargets(db, projectId, schema, targetChecks);
  const seriesNodes = [...pending.values()].filter((p) => p.row.kind === 0 && SERIES_CONTAINERS.some((c) => p.data.has(c)));
  await syncSeriesOfNodes(db, projectId, schema, seriesNodes.map((p) => ({ id: p.row.id, space: p.row.space, externalId: p.row.external_id })), now, services.changes);
  const fileNodes = [...pending.values()].filter((p) => p.row.kind === 0 && FILE_CONTAINERS.some((c) => p.data.has(c)));
  await syncFilesOfNodes(db, projectId, schema, fileNodes.map((p) => ({ id: p.row.id, space: p.row.space, externalId: p.row.external_id })), now);
  const created = [...pending.keys()].some((key) => !live(key));
  if (checkLimits) await requireInstanceLimits(db, projectId, services, created, deleted.length > 0);

  return {
    items: results.map(({ item, key }) => {
      const p = pending.get(key)!;
      return {
        instanceType: item.instanceType,
        space: item.space,
        externalId: item.externalId,
        version: p.row.version,
        wasModified: p.modified,
        createdTime: p.row.created_time,
        lastUpdatedTime: p.row.last_updated_time,
      };
    }),
    deleted,
  };
}

/** Where the request names a node it writes or deletes (its item), or its items when it names it only as a reference. */
function placeOf(n: DirectRelationReference, lists: Record<string, ReadonlyArray<{ instanceType: InstanceType; space: string; externalId: string }>>): Path {
  for (const [list, entries] of Object.entries(lists)) {
    const i = entries.findIndex((x) => x.instanceType === 'node' && x.space === n.space && x.externalId === n.externalId);
    if (i >= 0) return [list, i];
  }
  return ['items'];
}

const deletedNodes = (deleted: ReadonlyArray<{ instanceType: InstanceType; space: string; externalId: string }>): DirectRelationReference[] =>
  deleted.filter((d) => d.instanceType === 'node').map((d) => ({ space: d.space, externalId: d.externalId }));

/**
 * Keeps the maintained hierarchies (instance-hierarchy.ts) right after the request's writes: the new root,
 * path and path time of every node whose path changed, and for each such node not already changed by the
 * request, a new version and change feed position (so sync returns it). `pending` are the request's writes,
 * whose answers then report the change.
 */
async function maintainHierarchies(
  db: Queryable,
  projectId: number,
  schema: ProjectSchema,
  written: ReadonlyMap<string, readonly number[]>,
  deleted: readonly DirectRelationReference[],
  now: number,
  writer: HierarchyWriter,
  pending?: Map<string, Pending>,
): Promise<void> {
  const updates = await hierarchyUpdates(db, projectId, schema, written, deleted, now, writer);
  if (updates.length === 0) return;
  const byTable = new Map<string, HierarchyUpdate[]>();
  for (const u of updates) {
    const list = byTable.get(u.container.layout.table);
    if (list) list.push(u);
    else byTable.set(u.container.layout.table, [u]);
  }
  for (const [table, list] of byTable) {
    const c = list[0].container;
    const props = Object.keys(list[0].values);
    const columns = props.map((p) => c.layout.columns[p]);
    await insertRows(
      db,
      table,
      ['project_id', 'space', 'instance_id', ...columns],
      list.map((u) => [projectId, u.space, u.id, ...props.map((p) => u.values[p])]),
      Sql.raw(` ON CONFLICT ${containerRowKey(db.dialect)} DO UPDATE SET ${columns.map((col) => `${col} = excluded.${col}`).join(', ')}`),
    );
  }
  const changedHere = new Set([...(pending?.values() ?? [])].filter((p) => p.modified).map((p) => p.row.id));
  const ids = [...new Set(updates.map((u) => u.id))].filter((id) => !changedHere.has(id));
  const rows: InstanceRow[] = [];
  for (let at = 0; at < ids.length; at += 1000) {
    rows.push(...(await db.all<InstanceRow>(sql`SELECT ${Sql.raw(INSTANCE_COLUMNS)} FROM dm_instances WHERE project_id = ${projectId} AND id IN (${ids.slice(at, at + 1000)})`)));
  }
  const bumped = rows.map((r) => ({ ...r, id: Number(r.id), version: Number(r.version) + 1, last_updated_time: now }));
  if (bumped.length > 0) await writeInstanceRows(db, projectId, bumped);
  const byId = new Map(bumped.map((r) => [r.id, r]));
  for (const p of pending?.values() ?? []) {
    const r = byId.get(p.row.id);
    if (!r) continue;
    p.row.version = r.version;
    p.row.last_updated_time = r.last_updated_time;
    p.modified = true;
  }
}

/**
 * The project's limits on live instances and on tombstones, checked when the request added to them. Ids are
 * never reused, so no project holds more instance rows than the highest id given: below the limits (any
 * server short of millions of instances) the check is one index lookup, and only above it are rows counted.
 */
async function requireInstanceLimits(db: Queryable, projectId: number, services: Services, created: boolean, deleted: boolean): Promise<void> {
  if (!created && !deleted) return;
  const limits = projectLimits(modelsSettings(services).limits);
  const highest = await db.get<{ id: number | null }>(sql`SELECT max(id) AS id FROM dm_instances`);
  if (Number(highest?.id ?? 0) <= Math.min(created ? limits.instances : Infinity, deleted ? limits.softDeletedInstances : Infinity)) return;
  // The nodes of the system spaces are the service's, kept in every project, and count against none (system-nodes.ts).
  if (created) await requireWithinLimit(db, projectId, 'dm_instances', limits.instances, 'instances', sql`deleted_time IS NULL AND ${inUserSpace('space')}`);
  if (deleted) await requireWithinLimit(db, projectId, 'dm_instances', limits.softDeletedInstances, 'soft-deleted instances', sql`deleted_time IS NOT NULL`);
}

/**
 * A table that has more than doubled since the planner's statistics were taken is analyzed in the write,
 * so that the cost of keeping them is a few analyses in a table's life.
 * - PostgreSQL: a young table is otherwise planned as empty until the background analysis comes round, and
 *   the identity lookups of the next requests scan it (measured: 2 s per 1000-node request at 10,000 nodes,
 *   against 0.2 s once analyzed).
 * - SQLite plans without statistics unless ANALYZE wrote them, and then guesses: a traversal of 1000 edges
 *   read every edge through the (project, kind) index rather than the edges' start index (37 ms against
 *   3.7 ms analyzed, 100,000 edges). It does not count changes, so the rows added since the last analysis
 *   are counted here, per store (one process writes an SQLite file); a restart counts afresh, which only
 *   delays the next analysis.
 */
async function refreshStatistics(db: Queryable, tables: ReadonlyArray<{ table: string; added: number }>): Promise<void> {
  for (const { table, added } of tables) {
    if (added === 0) continue;
    const row = await db.get<{ rows: number; changed: number | null }>(db.dialect.tableStatistics(table));
    if (!row) continue;
    let counted = addedSinceAnalysis.get(db);
    if (row.changed === null && !counted) addedSinceAnalysis.set(db, (counted = new Map()));
    const changed = row.changed === null ? (counted!.get(table) ?? 0) : Number(row.changed);
    if (changed + added > Math.max(Number(row.rows), 100)) {
      for (const statement of db.dialect.analyze(table)) await db.run(Sql.raw(statement));
      counted?.delete(table);
    } else counted?.set(table, changed + added);
  }
}

/** Rows added to each table since it was last analyzed, per store, where the engine does not count them (SQLite). */
const addedSinceAnalysis = new WeakMap<Queryable, Map<string, number>>();

/** Every written instance with data in a container that requires another has data there too. */
async function checkRequires(db: Queryable, projectId: number, schema: ProjectSchema, pending: Map<string, Pending>, items: readonly InstanceWrite[]): Promise<void> {
  for (const [ckey, c] of schema.containers) {
    const requires = Object.entries(c.definition.constraints).filter(([, x]) => x.constraintType === 'requires');
    if (requires.length === 0) continue;
    const written = [...pending.values()].filter((p) => p.data.has(ckey)).map((p) => p.row.id);
    if (written.length === 0) continue;
    for (const [id, x] of requires) {
      if (x.constraintType !== 'requires') continue;
      const required = schema.stored(x.require);
      const rows = required
        ? await db.all<{ space: string; external_id: string; kind: number }>(
            sql`SELECT i.space, i.external_id, i.kind FROM ${Sql.raw(c.layout.table)} a JOIN dm_instances i ON i.project_id = a.project_id AND i.id = a.instance_id WHERE a.project_id = ${projectId} AND a.instance_id IN (${written}) AND NOT EXISTS (SELECT 1 FROM ${Sql.raw(
              required.layout.table,
            )} b WHERE b.project_id = a.project_id AND b.space = a.space AND b.instance_id = a.instance_id) LIMIT 10`,
          )
        : [];
      if (!required || rows.length > 0) {
        const who = rows.map((r) => `${r.space}:${r.external_id}`).join(', ');
        const index = items.findIndex((i) => rows.some((r) => r.space === i.space && r.external_id === i.externalId));
        fail(
          index >= 0 ? ['items', index] : ['items'],
          `the constraint ${JSON.stringify(id)} of the container ${ckey} requires data in ${containerKey(x.require)} as well${who ? `, which ${who} ${rows.length === 1 ? 'does' : 'do'} not have` : ''}`,
        );
      }
    }
  }
}

/** Direct relations whose property names a target container point at nodes with data there. */
async function checkTargets(db: Queryable, projectId: number, schema: ProjectSchema, checks: ReadonlyArray<{ ref: DirectRelationReference; container: string }>): Promise<void> {
  const byContainer = new Map<string, DirectRelationReference[]>();
  for (const { ref, container } of checks) byContainer.set(container, [...(byContainer.get(container) ?? []), ref]);
  for (const [ckey, refs] of byContainer) {
    const c = schema.containers.get(ckey);
    const rows = c
      ? await db.all<{ space: string; external_id: string }>(
          sql`SELECT i.space, i.external_id FROM dm_instances i JOIN ${Sql.raw(c.layout.table)} t ON t.project_id = i.project_id AND t.space = i.space AND t.instance_id = i.id WHERE i.project_id = ${projectId} AND i.kind = 0 AND i.deleted_time IS NULL AND (i.space, i.external_id) IN (VALUES ${Sql.join(
            refs.map((r) => sql`(${r.space}, ${r.externalId})`),
            ', ',
          )})`,
        )
      : [];
    const ok = new Set(rows.map((r) => `${r.space}:${r.external_id}`));
    const missing = refs.filter((r) => !ok.has(nodeKey(r)));
    if (missing.length > 0) throw missingNodes(missing, `The direct relations must point at nodes with data in the container ${ckey}, and`, 'write those nodes first');
  }
}

/**
 * Deletes instances (soft: the row stays as a tombstone without data), with the edges of deleted nodes;
 * those absent are skipped. `existingVersion` conflicts fail the request, and so does a node with edges in a
 * space outside `access`, the request's write scope: the edges go with the node, and a request changes
 * nothing outside its scope. `list` names the request's list of the items, for messages.
 */
export async function deleteRows(
  db: Queryable,
  projectId: number,
  schema: ProjectSchema,
  items: readonly InstanceDeleteItem[],
  now: number,
  options: { list: 'items' | 'delete'; access: Access | undefined; spacesChecked?: boolean; blobs: Services['blobs']; changes?: ChangeFeed },
) {
  if (items.length === 0) return [];
  if (!options.spacesChecked) {
    const found = await existingSpaces(db, projectId, items.map((i) => i.space));
    const unknown = [...new Set(items.map((i) => i.space))].filter((s) => !found.has(s));
    if (unknown.length > 0) throw badRequest(`One or more spaces do not exist: ${unknown.join(', ')}`, { missing: unknown.map((space) => ({ space })) });
  }
  const existing = await findInstances(db, projectId, items);
  const targets: InstanceRow[] = [];
  const deleted: Array<{ instanceType: InstanceType; space: string; externalId: string }> = [];
  const itemOfNode = new Map<string, number>();
  items.forEach((item, i) => {
    const row = existing.get(instanceKey(item));
    if (!row || row.deleted_time !== null) return;
    if (item.existingVersion !== undefined && row.version > item.existingVersion) {
      throw new ApiError(409, `${formatPath([options.list, i])}: the ${item.instanceType} ${item.space}:${item.externalId} is at version ${row.version}, and the request expects version ${item.existingVersion}`);
    }
    if (targets.some((t) => t.id === row.id)) return;
    targets.push(row);
    deleted.push({ instanceType: item.instanceType, space: item.space, externalId: item.externalId });
    if (row.kind === 0) itemOfNode.set(encodeRef(item), i);
  });
  const nodeRefs = [...itemOfNode.keys()];
  const chosen = new Set(targets.map((t) => t.id));
  for (let at = 0; at < nodeRefs.length; at += 500) {
    const chunk = nodeRefs.slice(at, at + 500);
    const edges = await db.all<InstanceRow>(
      sql`SELECT ${Sql.raw(INSTANCE_COLUMNS)} FROM dm_instances WHERE project_id = ${projectId} AND kind = 1 AND deleted_time IS NULL AND (start_ref IN (${chunk}) OR end_ref IN (${chunk}))`,
    );
    for (const e of edges) {
      if (chosen.has(e.id)) continue;
      const node = itemOfNode.has(e.start_ref!) ? e.start_ref! : e.end_ref!;
      requireEffectWritable(options.access, e.space, [options.list, itemOfNode.get(node)!], `the node ${nodeKey(decodeRef(node))} has edges`, 'deleting it would delete them');
      chosen.add(e.id);
      targets.push(e);
    }
  }
  if (targets.length === 0) return deleted;
  const nodes = targets.filter((t) => t.kind === 0).map((t) => ({ space: t.space, externalId: t.external_id }));
  await deleteManagedSeries(db, projectId, nodes, now, options.changes);
  await deleteManagedFiles(db, { blobs: options.blobs }, projectId, nodes);
  await writeInstanceRows(
    db,
    projectId,
    targets.map((t) => ({ ...t, version: t.version + 1, last_updated_time: now, deleted_time: now })),
  );
  const holding = await containersHolding(db, projectId, schema, targets.map((t) => t.id));
  const byContainer = new Map<string, number[]>();
  for (const [id, keys] of holding) for (const key of keys) byContainer.set(key, [...(byContainer.get(key) ?? []), id]);
  for (const [key, ids] of byContainer) {
    const c = schema.containers.get(key)!;
    for (let at = 0; at < ids.length; at += 1000) {
      await db.run(sql`DELETE FROM ${Sql.raw(c.layout.table)} WHERE project_id = ${projectId} AND instance_id IN (${ids.slice(at, at + 1000)})`);
    }
  }
  return deleted;
}

export async function deleteInstances(services: Services, projectId: number, items: readonly InstanceDeleteItem[]) {
  requireUserSpaces(items.map((item, i) => named(item, ['items', i])));
  requireSpacesWritable(services.access, items.map((item, i) => ({ space: item.space, path: ['items', i, 'space'] })));
  return services.db.transaction(async (db) => {
    await claimChanges(db, projectId, 0);
    const schema = await readSchema(db, projectId);
    const now = services.now();
    const deleted = await deleteRows(db, projectId, schema, items, now, { list: 'items', access: services.access, blobs: services.blobs, changes: services.changes });
    const writer: HierarchyWriter = { place: (n) => placeOf(n, { items }), sees: services.reach?.(INSTANCES_ACL), writes: services.access };
    await maintainHierarchies(db, projectId, schema, new Map(), deletedNodes(deleted), now, writer);
    await requireInstanceLimits(db, projectId, services, false, deleted.length > 0);
    return { items: deleted };
  });
}
