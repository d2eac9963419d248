/**
 * The operations on definitions: spaces, containers (with their tables), views and data models: apply,
 * list, by ids, delete; index and constraint delete, the retry operations and container inspect. Each
 * write is one transaction; the rules themselves live in the pure modules next to this one.
 */
import { isDeepStrictEqual } from 'node:util';
import { badRequest } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { allocateIds } from '../../storage/ids.js';
import { holdLock } from '../../storage/locks.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { planContainerUpdate, type Bound } from './container-changes.js';
import type { ContainerCreate, ContainerSubObjectsBody, InspectContainersBody } from './container-schema.js';
import { checkState, requestChecks, type Check } from './container-checks.js';
import { alterContainerTable, createContainerTable, dropContainerTable, dropIndex, newLayout } from './container-tables.js';
import { containerDependencies, containerReadForm, normalizeContainer, propertyConstraintState, requireContainers } from './containers.js';
import type { DataModelCreate } from './data-model-schema.js';
import { dataModelReadForm, normalizeDataModels } from './data-models.js';
import {
  checkNoDuplicates,
  containerKey,
  fail,
  missingViews,
  requireUserSpaces,
  viewKey,
  viewRef,
  type ContainerId,
  type Path,
  type ViewId,
} from './identifiers.js';
import { requireWithinLimit, limitReached } from '../project-limits.js';
import { projectLimits } from './limits.js';
import {
  containerFromRow,
  dataModelFromRow,
  existingSpaces,
  GLOBAL_PROJECT_ID,
  loadSchema,
  saveContainer,
  schemaChanged,
  metadata,
  projectOrGlobal,
  viewFromRow,
  type ProjectSchema,
  type SpaceSet,
  type StoredContainer,
  type StoredView,
} from './schema-store.js';
import { inSchemaScope, requireSpacesWritable, schemaCondition, schemaSpaces, visibleSchema } from './space-access.js';
import type { SpaceCreate } from './space-schema.js';
import { normalizeSpaces, spaceReadForm } from './spaces.js';
import { checkViewUpdate } from './view-changes.js';
import { viewReadForm } from './view-resolution.js';
import type { ViewCreate, ViewRead } from './view-schema.js';
import { normalizeViews, type ViewDefinition } from './views.js';
import { modelsSettings } from './settings.js';

// ---------------------------------------------------------------------------------------------------------
// Shared

export interface ListPage<T> {
  items: T[];
  nextCursor?: string;
}

/** One page of a catalog table in id order, with the request's conditions; the cursor is bound to `binding`. */
async function catalogPage<R extends { id: number }>(
  services: Services,
  select: Sql,
  conditions: Sql[],
  limit: number,
  cursor: string | undefined,
  binding: unknown,
  alias = '',
): Promise<{ rows: R[]; nextCursor?: string }> {
  const where = [...conditions];
  if (cursor !== undefined) {
    const state = services.cursors.decode(cursor, binding) as { id?: unknown };
    if (!Number.isSafeInteger(state?.id)) throw badRequest('cursor: not a cursor issued by this server');
    where.push(sql`${Sql.raw(`${alias}id`)} > ${state.id as number}`);
  }
  const rows = await services.reads.all<R>(sql`${select} WHERE ${Sql.and(where)} ORDER BY ${Sql.raw(`${alias}id`)} LIMIT ${limit + 1}`);
  if (rows.length <= limit) return { rows };
  rows.length = limit;
  return { rows, nextCursor: services.cursors.encode({ id: rows[limit - 1].id }, binding) };
}

/** A 400 naming the spaces among `targets` that do not exist (as the service words it), listed under `missing`. */
async function requireSpaces(db: Queryable, projectId: number, spaces: readonly string[]): Promise<void> {
  const found = await existingSpaces(db, projectId, spaces);
  const missing = [...new Set(spaces)].filter((s) => !found.has(s));
  if (missing.length > 0) {
    throw badRequest(`One or more spaces do not exist: ${missing.join(', ')}`, { missing: missing.map((space) => ({ space })) });
  }
}

/** A change of the project's schema: one transaction, after the changes of it begun before (locks.ts). */
const write = <T>(services: Services, projectId: number, fn: (db: Queryable) => Promise<T>): Promise<T> =>
  services.db.transaction(async (db) => {
    await holdLock(db, 'schema', projectId);
    return fn(db);
  });

/**
 * A 400 when a request would change something in a system space (`cdf_`). Only seeding writes there: it
 * writes the global layer (GLOBAL_PROJECT_ID), which no request names.
 */
function requireUserWritable(projectId: number, targets: ReadonlyArray<{ space: string; path: Path; what: string }>): void {
  if (projectId !== GLOBAL_PROJECT_ID) requireUserSpaces(targets);
}

/** The rows a list reads: the project's, and with `includeGlobal` the global layer's too. */
const listScope = (projectId: number, includeGlobal: boolean | undefined, alias = ''): Sql =>
  includeGlobal ? projectOrGlobal(projectId, `${alias}project_id`) : sql`${Sql.raw(`${alias}project_id`)} = ${projectId}`;

const named = (kind: string, id: { space: string; externalId?: string; version?: string }): string =>
  `the ${kind} ${id.externalId === undefined ? JSON.stringify(id.space) : id.version === undefined ? `${id.space}:${id.externalId}` : viewKey(id as ViewId)}`;

// ---------------------------------------------------------------------------------------------------------
// Spaces

interface SpaceRow {
  id: number;
  project_id: number;
  space: string;
  name: string | null;
  description: string | null;
  created_time: number;
  last_updated_time: number;
}

const SPACE_COLUMNS = Sql.raw('id, project_id, space, name, description, created_time, last_updated_time');

function spaceRead(r: SpaceRow) {
  return spaceReadForm(
    { space: r.space, ...(r.name !== null ? { name: r.name } : {}), ...(r.description !== null ? { description: r.description } : {}) },
    metadata({ createdTime: r.created_time, lastUpdatedTime: r.last_updated_time, isGlobal: Number(r.project_id) === GLOBAL_PROJECT_ID }),
  );
}

export async function applySpaces(services: Services, projectId: number, items: readonly SpaceCreate[]) {
  const defs = normalizeSpaces(items, projectId === GLOBAL_PROJECT_ID);
  requireSpacesWritable(services.access, defs.map((d, i) => ({ space: d.space, path: ['items', i, 'space'] })));
  const now = services.now();
  return write(services, projectId, async (db) => {
    const out = [];
    for (const d of defs) {
      const existing = await db.get<SpaceRow>(sql`SELECT ${SPACE_COLUMNS} FROM dm_spaces WHERE project_id = ${projectId} AND space = ${d.space}`);
      if (!existing) {
        const [id] = await allocateIds(db, 'dm_spaces', 1);
        await db.run(
          sql`INSERT INTO dm_spaces (id, project_id, space, name, description, created_time, last_updated_time) VALUES (${id}, ${projectId}, ${d.space}, ${d.name ?? null}, ${d.description ?? null}, ${now}, ${now})`,
        );
        out.push(spaceRead({ id, project_id: projectId, space: d.space, name: d.name ?? null, description: d.description ?? null, created_time: now, last_updated_time: now }));
      } else if (existing.name !== (d.name ?? null) || existing.description !== (d.description ?? null)) {
        await db.run(sql`UPDATE dm_spaces SET name = ${d.name ?? null}, description = ${d.description ?? null}, last_updated_time = ${now} WHERE id = ${existing.id} AND project_id = ${projectId}`);
        out.push(spaceRead({ ...existing, name: d.name ?? null, description: d.description ?? null, last_updated_time: now }));
      } else {
        out.push(spaceRead(existing));
      }
    }
    await requireWithinLimit(db, projectId, 'dm_spaces', projectLimits(modelsSettings(services).limits).spaces, 'spaces');
    return { items: out };
  });
}

export async function listSpaces(services: Services, projectId: number, q: { limit?: number; cursor?: string; includeGlobal?: boolean }) {
  const conditions = [listScope(projectId, q.includeGlobal)];
  const scope = schemaCondition(services.access);
  if (scope) conditions.push(scope);
  const page = await catalogPage<SpaceRow>(services, sql`SELECT ${SPACE_COLUMNS} FROM dm_spaces`, conditions, q.limit ?? 10, q.cursor, { op: 'spaces', includeGlobal: q.includeGlobal ?? false });
  return { items: page.rows.map(spaceRead), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

export async function spacesByIds(services: Services, projectId: number, spaces: readonly string[]) {
  const rows = await spaceRows(services.reads, projectId, spaces, services, true);
  const bySpace = new Map(rows.map((r) => [r.space, r]));
  return { items: [...new Set(spaces)].flatMap((s) => (bySpace.has(s) ? [spaceRead(bySpace.get(s)!)] : [])) };
}

async function spaceRows(db: Pick<Queryable, 'all'>, projectId: number, spaces: readonly string[], services: Services, includeGlobal = false): Promise<SpaceRow[]> {
  const scope = schemaCondition(services.access);
  return db.all<SpaceRow>(sql`SELECT ${SPACE_COLUMNS} FROM dm_spaces WHERE ${listScope(projectId, includeGlobal)} AND space IN (${[...new Set(spaces)]})${scope ? sql` AND ${scope}` : Sql.raw('')}`);
}

/** What a space still holds, by kind, for the refusal to delete it. */
async function spaceContents(db: Queryable, projectId: number, space: string): Promise<string[]> {
  const counts = await db.get<Record<string, number>>(sql`SELECT
    (SELECT count(*) FROM dm_containers WHERE project_id = ${projectId} AND space = ${space}) AS containers,
    (SELECT count(*) FROM dm_views WHERE project_id = ${projectId} AND space = ${space}) AS views,
    (SELECT count(*) FROM dm_data_models WHERE project_id = ${projectId} AND space = ${space}) AS "dataModels",
    (SELECT count(*) FROM dm_instances WHERE project_id = ${projectId} AND space = ${space} AND deleted_time IS NULL) AS instances`);
  return Object.entries(counts!)
    .filter(([, n]) => Number(n) > 0)
    .map(([kind, n]) => `${n} ${kind === 'dataModels' ? 'data model' : kind.slice(0, -1)}${Number(n) === 1 ? '' : 's'}`);
}

export async function deleteSpaces(services: Services, projectId: number, spaces: readonly string[]) {
  checkNoDuplicates(spaces, (s) => s, (space) => ({ space }));
  requireUserWritable(projectId, spaces.map((space, i) => ({ space, path: ['items', i, 'space'], what: named('space', { space }) })));
  requireSpacesWritable(services.access, spaces.map((space, i) => ({ space, path: ['items', i, 'space'] })));
  return write(services, projectId, async (db) => {
    const found = await spaceRows(db, projectId, spaces, services);
    const existing = new Set(found.map((r) => r.space));
    const deleted: Array<{ space: string }> = [];
    for (const [i, space] of spaces.entries()) {
      if (!existing.has(space)) continue;
      const holds = await spaceContents(db, projectId, space);
      if (holds.length > 0) {
        fail(['items', i, 'space'], `the space ${JSON.stringify(space)} still holds ${holds.join(', ')}; delete them first (nothing was deleted)`);
      }
      deleted.push({ space });
    }
    for (const { space } of deleted) await db.run(sql`DELETE FROM dm_spaces WHERE project_id = ${projectId} AND space = ${space}`);
    return { items: deleted };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Containers

const CONTAINER_COLUMNS = Sql.raw('id, project_id, definition, layout, states, created_time, last_updated_time');

export function containerRead(c: StoredContainer) {
  return containerReadForm(c.definition, metadata(c), c.states);
}

export async function applyContainers(services: Services, projectId: number, items: readonly ContainerCreate[]) {
  checkNoDuplicates(items, containerKey, (c) => ({ space: c.space, externalId: c.externalId }));
  requireUserWritable(projectId, items.map((c, i) => ({ space: c.space, path: ['items', i], what: named('container', c) })));
  requireSpacesWritable(services.access, items.map((c, i) => ({ space: c.space, path: ['items', i, 'space'] })));
  const now = services.now();
  return write(services, projectId, async (db) => {
    await requireSpaces(db, projectId, items.map((c) => c.space));
    const schema = await loadSchema(db, projectId);
    const visible = schema.restrictedTo(schemaSpaces(services));
    const defs = items.map((item, i) => normalizeContainer(item, ['items', i], schema.container(item)));
    const applying = new Set(defs.map(containerKey));
    for (const def of defs) requireContainers(containerDependencies(def), (id) => applying.has(containerKey(id)) || visible.container(id) !== undefined);
    const out: StoredContainer[] = [];
    const changed: Array<{ c: StoredContainer; checks: Check[] }> = [];
    for (const [i, def] of defs.entries()) {
      const stored = schema.stored(def);
      if (!stored) {
        const [id] = await allocateIds(db, 'dm_containers', 1);
        const c: StoredContainer = { id, definition: def, layout: newLayout(id), states: {}, createdTime: now, lastUpdatedTime: now };
        await createContainerTable(db, def, c.layout);
        await db.run(
          sql`INSERT INTO dm_containers (id, project_id, space, external_id, definition, layout, states, created_time, last_updated_time) VALUES (${id}, ${projectId}, ${def.space}, ${def.externalId}, ${JSON.stringify(
            def,
          )}, ${JSON.stringify(c.layout)}, '{}', ${now}, ${now})`,
        );
        schema.putContainer(c);
        out.push(c);
        continue;
      }
      const change = planContainerUpdate(stored.definition, def, ['items', i]);
      if (!change.changed) {
        out.push(stored);
        continue;
      }
      const c: StoredContainer = { ...stored, definition: change.definition, layout: structuredClone(stored.layout), states: structuredClone(stored.states), lastUpdatedTime: now };
      await alterContainerTable(db, c.definition, c.layout, change.addedProperties, change.addedIndexes, change.addedConstraints);
      // What the stored data may break: the indexes and constraints added, the bounds that appeared or tightened.
      const checks: Check[] = [
        ...change.addedIndexes.map((id) => ({ kind: 'indexes' as const, id })),
        ...change.addedConstraints.map((id) => ({ kind: 'constraints' as const, id })),
        ...change.revalidate.map(({ property, bound }) => ({ kind: 'properties' as const, id: property, bound })),
      ];
      changed.push({ c, checks });
      schema.putContainer(c);
      out.push(c);
    }
    // After all of the request's containers are in the schema: a requires constraint may name one of them.
    for (const { c, checks } of changed) {
      await requestChecks(services.jobs, db, projectId, schema, c, checks);
      await saveContainer(db, projectId, c);
    }
    if (out.some((c) => c.lastUpdatedTime === now)) await schemaChanged(db, projectId);
    await requireWithinLimit(db, projectId, 'dm_containers', projectLimits(modelsSettings(services).limits).containers, 'containers');
    const properties = [...schema.containers.values()].filter((c) => !c.isGlobal).reduce((n, c) => n + Object.keys(c.definition.properties).length, 0);
    const propertyLimit = projectLimits(modelsSettings(services).limits).containerProperties;
    if (properties > propertyLimit) throw limitReached(propertyLimit, 'container properties');
    return { items: out.map(containerRead) };
  });
}

export async function listContainers(
  services: Services,
  projectId: number,
  q: { limit?: number; cursor?: string; space?: string; includeGlobal?: boolean },
  usedFor: readonly string[] | undefined,
) {
  const conditions = [listScope(projectId, q.includeGlobal)];
  if (q.space !== undefined) conditions.push(sql`space = ${q.space}`);
  const scope = schemaCondition(services.access);
  if (scope) conditions.push(scope);
  const kinds = usedFor ?? ['node', 'edge', 'all'];
  const items: ReturnType<typeof containerRead>[] = [];
  // usedFor lives in the definition; read pages until the page is full or the table ends.
  let cursor = q.cursor;
  const limit = q.limit ?? 10;
  const binding = { op: 'containers', space: q.space, usedFor: kinds, includeGlobal: q.includeGlobal ?? false };
  for (;;) {
    const page = await catalogPage<Parameters<typeof containerFromRow>[0]>(services, sql`SELECT ${CONTAINER_COLUMNS} FROM dm_containers`, conditions, limit, cursor, binding);
    for (const r of page.rows) {
      const c = containerFromRow(r);
      if (kinds.includes(c.definition.usedFor)) items.push(containerRead(c));
      if (items.length === limit) {
        const last = page.rows.indexOf(r) === page.rows.length - 1 && !page.nextCursor;
        return { items, ...(last ? {} : { nextCursor: services.cursors.encode({ id: r.id }, binding) }) };
      }
    }
    if (!page.nextCursor) return { items };
    cursor = page.nextCursor;
  }
}

export async function containersByIds(services: Services, projectId: number, ids: readonly ContainerId[]) {
  const schema = await visibleSchema(services, projectId);
  const seen = new Set<string>();
  const items = [];
  for (const id of ids) {
    const c = schema.stored(id);
    if (!c || seen.has(containerKey(id)) || !inSchemaScope(services.access, id.space)) continue;
    seen.add(containerKey(id));
    items.push(containerRead(c));
  }
  return { items };
}

export async function deleteContainers(services: Services, projectId: number, ids: readonly ContainerId[]) {
  requireUserWritable(projectId, ids.map((c, i) => ({ space: c.space, path: ['items', i], what: named('container', c) })));
  requireSpacesWritable(services.access, ids.map((c, i) => ({ space: c.space, path: ['items', i, 'space'] })));
  return write(services, projectId, async (db) => {
    const schema = await loadSchema(db, projectId);
    requireNotRequired(schema, ids, schemaSpaces(services));
    const deleted: ContainerId[] = [];
    for (const id of ids) {
      const c = schema.stored(id);
      if (!c || deleted.some((d) => containerKey(d) === containerKey(id))) continue;
      await dropContainerTable(db, c.layout);
      await db.run(sql`DELETE FROM dm_containers WHERE project_id = ${projectId} AND id = ${c.id}`);
      deleted.push({ space: id.space, externalId: id.externalId });
    }
    if (deleted.length > 0) await schemaChanged(db, projectId);
    return { items: deleted };
  });
}

/**
 * A 400 when a container being deleted is required (a `requires` constraint) by a container that stays:
 * that constraint could never hold again. Deleting both in one request, or the constraint first, is fine.
 * A requiring container the principal does not see (`seen`) is not named: the refusal says only that one
 * exists, since deleting would break it.
 */
function requireNotRequired(schema: ProjectSchema, ids: readonly ContainerId[], seen: SpaceSet | undefined): void {
  const deleting = new Set(ids.filter((id) => schema.stored(id)).map(containerKey));
  for (const [i, id] of ids.entries()) {
    if (!schema.stored(id)) continue;
    for (const c of schema.containers.values()) {
      if (deleting.has(containerKey(c.definition))) continue;
      for (const [constraint, x] of Object.entries(c.definition.constraints)) {
        if (x.constraintType !== 'requires' || containerKey(x.require) !== containerKey(id)) continue;
        if (seen && !seen.has(c.definition.space)) {
          fail(['items', i], `the container ${containerKey(id)} is required by a constraint of a container in a space this principal cannot see; it cannot be deleted while that constraint exists (nothing was deleted)`);
        }
        fail(
          ['items', i],
          `the container ${containerKey(id)} is required by the constraint ${JSON.stringify(constraint)} of the container ${containerKey(c.definition)}; delete that constraint or that container first (nothing was deleted)`,
        );
      }
    }
  }
}

type SubObject = ContainerSubObjectsBody['items'][number];

/** Deletes indexes or constraints named by the request; unknown ones are left out of the answer. */
export async function deleteContainerParts(services: Services, projectId: number, items: readonly SubObject[], kind: 'indexes' | 'constraints') {
  requireUserWritable(projectId, items.map((c, i) => ({ space: c.space, path: ['items', i], what: named('container', { space: c.space, externalId: c.containerExternalId }) })));
  requireSpacesWritable(services.access, items.map((c, i) => ({ space: c.space, path: ['items', i, 'space'] })));
  const now = services.now();
  return write(services, projectId, async (db) => {
    const schema = await loadSchema(db, projectId);
    const done: SubObject[] = [];
    const changed = new Map<number, StoredContainer>();
    for (const item of items) {
      const id = { space: item.space, externalId: item.containerExternalId };
      const c = changed.get(schema.stored(id)?.id ?? -1) ?? schema.stored(id);
      if (!c || !Object.hasOwn(c.definition[kind], item.identifier)) continue;
      const next: StoredContainer = { ...c, definition: structuredClone(c.definition), layout: structuredClone(c.layout), states: structuredClone(c.states), lastUpdatedTime: now };
      delete next.definition[kind][item.identifier];
      delete next.states[kind]?.[item.identifier];
      const names = kind === 'indexes' ? next.layout.indexes : next.layout.constraints;
      if (names[item.identifier]) await dropIndex(db, names[item.identifier]);
      delete names[item.identifier];
      changed.set(c.id, next);
      done.push({ space: item.space, containerExternalId: item.containerExternalId, identifier: item.identifier });
    }
    for (const c of changed.values()) await saveContainer(db, projectId, c);
    if (changed.size > 0) await schemaChanged(db, projectId);
    return { items: done };
  });
}

/**
 * Checks indexes, constraints, or the bounds of properties against the data stored now (container-checks.ts):
 * a failed index or uniqueness constraint is built again, a requires constraint or a bound validated again;
 * the answer comes at once, with those pending. Unknown ones are a 400 listing them.
 */
export async function retryContainerParts(services: Services, projectId: number, items: readonly SubObject[], kind: 'indexes' | 'constraints' | 'properties') {
  requireUserWritable(projectId, items.map((c, i) => ({ space: c.space, path: ['items', i], what: named('container', { space: c.space, externalId: c.containerExternalId }) })));
  requireSpacesWritable(services.access, items.map((c, i) => ({ space: c.space, path: ['items', i, 'space'] })));
  const now = services.now();
  return write(services, projectId, async (db) => {
    const schema = await loadSchema(db, projectId);
    const missing = items.filter((item) => {
      const c = schema.stored({ space: item.space, externalId: item.containerExternalId });
      return !c || !Object.hasOwn(c.definition[kind], item.identifier);
    });
    if (missing.length > 0) {
      throw badRequest(`Unknown ${kind === 'indexes' ? 'indexes' : kind === 'constraints' ? 'constraints' : 'properties'}: ${missing.map((m) => `${m.space}:${m.containerExternalId}.${m.identifier}`).join(', ')}`, {
        missing: missing.map((m) => ({ space: m.space, containerExternalId: m.containerExternalId, identifier: m.identifier })),
      });
    }
    const checks = new Map<number, { c: StoredContainer; checks: Check[] }>();
    for (const item of items) {
      const c = schema.stored({ space: item.space, externalId: item.containerExternalId })!;
      const entry = checks.get(c.id) ?? { c: { ...c, states: structuredClone(c.states) }, checks: [] };
      checks.set(c.id, entry);
      const id = item.identifier;
      if (kind === 'properties') {
        for (const bound of Object.keys(propertyConstraintState(c.definition.properties[id])) as Bound[]) entry.checks.push({ kind, id, bound });
      } else if ((kind === 'constraints' && c.definition.constraints[id].constraintType === 'requires') || checkState(c.states, { kind, id }) === 'failed') {
        // An index or uniqueness constraint that is current is there; one that failed is built again.
        entry.checks.push({ kind, id });
      }
    }
    let anyChanged = false;
    for (const { c, checks: wanted } of checks.values()) {
      const before = structuredClone(c.states);
      await requestChecks(services.jobs, db, projectId, schema, c, wanted);
      if (isDeepStrictEqual(before, c.states)) continue;
      await saveContainer(db, projectId, { ...c, lastUpdatedTime: now });
      anyChanged = true;
    }
    if (anyChanged) await schemaChanged(db, projectId);
    return { items: items.map((m) => ({ space: m.space, containerExternalId: m.containerExternalId, identifier: m.identifier })) };
  });
}

/** The latest version of each view: the one created last. */
function latestVersions(views: Iterable<StoredView>): StoredView[] {
  const latest = new Map<string, StoredView>();
  for (const v of views) {
    const key = containerKey(v.definition);
    const before = latest.get(key);
    if (!before || v.createdTime > before.createdTime || (v.createdTime === before.createdTime && v.id > before.id)) latest.set(key, v);
  }
  return [...latest.values()];
}

export async function inspectContainers(services: Services, projectId: number, body: InspectContainersBody) {
  const schema = await visibleSchema(services, projectId);
  const readable = (space: string) => inSchemaScope(services.access, space);
  const items = [];
  for (const id of body.items) {
    if (!schema.stored(id) || !readable(id.space)) continue;
    const mapping = (all: boolean) =>
      (all ? [...schema.views.values()] : latestVersions(schema.views.values())).filter((v) =>
        (schema.resolver.view(v.definition)?.mappedContainers ?? []).some((c) => containerKey(c) === containerKey(id)),
      );
    const results: Record<string, unknown> = {};
    const ops = body.inspectionOperations;
    if (ops.involvedViews) {
      results.involvedViews = mapping(ops.involvedViews.allVersions ?? false)
        .filter((v) => readable(v.definition.space))
        .map((v) => viewRef(v.definition));
    }
    if (ops.totalInvolvedViewCount) {
      const views = mapping(ops.totalInvolvedViewCount.allVersions ?? false);
      results.involvedViewCount = (ops.totalInvolvedViewCount.includeUnavailableViews ?? true) ? views.length : views.filter((v) => readable(v.definition.space)).length;
    }
    items.push({ space: id.space, externalId: id.externalId, inspectionResults: results });
  }
  return { items };
}

// ---------------------------------------------------------------------------------------------------------
// Views

export function viewRead(schema: ProjectSchema, v: StoredView, includeInheritedProperties = true): ViewRead {
  return viewReadForm(schema.resolver.view(v.definition)!, metadata(v), { includeInheritedProperties, states: schema.states });
}

/** Applies view definitions in the request's transaction (also the inline views of data models). */
async function putViews(db: Queryable, projectId: number, schema: ProjectSchema, defs: readonly ViewDefinition[], paths: readonly Path[], now: number): Promise<StoredView[]> {
  const before = new Map(defs.map((d) => [viewKey(d), schema.views.get(viewKey(d))]));
  const storedResolved = new Map(defs.map((d) => [viewKey(d), before.get(viewKey(d)) ? schema.resolver.view(d) : undefined]));
  const out: StoredView[] = [];
  for (const d of defs) {
    const existing = before.get(viewKey(d));
    schema.putView({ id: existing?.id ?? 0, definition: d, createdTime: existing?.createdTime ?? now, lastUpdatedTime: now });
  }
  for (const [i, d] of defs.entries()) {
    schema.resolver.validate(d, paths[i]);
    const existing = before.get(viewKey(d));
    if (existing) {
      const changed = checkViewUpdate(storedResolved.get(viewKey(d))!, d, schema, paths[i]);
      if (!changed) {
        schema.putView(existing);
        out.push(existing);
        continue;
      }
      await db.run(sql`UPDATE dm_views SET definition = ${JSON.stringify(d)}, last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${existing.id}`);
      const v = { ...existing, definition: d, lastUpdatedTime: now };
      schema.putView(v);
      out.push(v);
      continue;
    }
    const [id] = await allocateIds(db, 'dm_views', 1);
    await db.run(
      sql`INSERT INTO dm_views (id, project_id, space, external_id, version, definition, created_time, last_updated_time) VALUES (${id}, ${projectId}, ${d.space}, ${d.externalId}, ${d.version}, ${JSON.stringify(
        d,
      )}, ${now}, ${now})`,
    );
    const v = { id, definition: d, createdTime: now, lastUpdatedTime: now };
    schema.putView(v);
    out.push(v);
  }
  if (out.some((v) => v.lastUpdatedTime === now)) await schemaChanged(db, projectId);
  return out;
}

export async function applyViews(services: Services, projectId: number, items: readonly ViewCreate[]) {
  requireUserWritable(projectId, items.map((v, i) => ({ space: v.space, path: ['items', i], what: named('view', v) })));
  requireSpacesWritable(services.access, items.map((v, i) => ({ space: v.space, path: ['items', i, 'space'] })));
  const defs = normalizeViews(items);
  const now = services.now();
  return write(services, projectId, async (db) => {
    await requireSpaces(db, projectId, defs.map((d) => d.space));
    const schema = (await loadSchema(db, projectId)).restrictedTo(schemaSpaces(services));
    const stored = await putViews(db, projectId, schema, defs, defs.map((_, i) => ['items', i]), now);
    await requireWithinLimit(db, projectId, 'dm_views', projectLimits(modelsSettings(services).limits).views, 'view versions');
    return { items: stored.map((v) => viewRead(schema, v)) };
  });
}

export async function listViews(
  services: Services,
  projectId: number,
  q: { limit?: number; cursor?: string; space?: string; includeInheritedProperties?: boolean; allVersions?: boolean; includeGlobal?: boolean },
) {
  const schema = await visibleSchema(services, projectId);
  const conditions = [listScope(projectId, q.includeGlobal, 'v.')];
  if (q.space !== undefined) conditions.push(sql`v.space = ${q.space}`);
  const scope = schemaCondition(services.access, 'v.');
  if (scope) conditions.push(scope);
  if (!q.allVersions) {
    conditions.push(
      Sql.raw(
        'NOT EXISTS (SELECT 1 FROM dm_views w WHERE w.project_id = v.project_id AND w.space = v.space AND w.external_id = v.external_id AND (w.created_time > v.created_time OR (w.created_time = v.created_time AND w.id > v.id)))',
      ),
    );
  }
  const page = await catalogPage<Parameters<typeof viewFromRow>[0]>(
    services,
    Sql.raw('SELECT v.id, v.project_id, v.definition, v.created_time, v.last_updated_time FROM dm_views v'),
    conditions,
    q.limit ?? 10,
    q.cursor,
    { op: 'views', space: q.space, allVersions: q.allVersions ?? false, includeGlobal: q.includeGlobal ?? false },
    'v.',
  );
  return {
    items: page.rows.map((r) => viewRead(schema, schema.views.get(viewKey(viewFromRow(r).definition)) ?? viewFromRow(r), q.includeInheritedProperties ?? true)),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** Views named by id; without a version, every version of the view. */
function viewsNamed(schema: ProjectSchema, ids: ReadonlyArray<{ space: string; externalId: string; version?: string }>): StoredView[] {
  const out = new Map<string, StoredView>();
  for (const id of ids) {
    if (id.version !== undefined) {
      const v = schema.views.get(viewKey(id as ViewId));
      if (v) out.set(viewKey(v.definition), v);
      continue;
    }
    const all = [...schema.views.values()].filter((v) => v.definition.space === id.space && v.definition.externalId === id.externalId).sort((a, b) => a.id - b.id);
    for (const v of all) out.set(viewKey(v.definition), v);
  }
  return [...out.values()];
}

export async function viewsByIds(services: Services, projectId: number, ids: ReadonlyArray<{ space: string; externalId: string; version?: string }>, includeInheritedProperties = true) {
  const schema = await visibleSchema(services, projectId);
  return { items: viewsNamed(schema, ids).filter((v) => inSchemaScope(services.access, v.definition.space)).map((v) => viewRead(schema, v, includeInheritedProperties)) };
}

export async function deleteViews(services: Services, projectId: number, ids: readonly ViewId[]) {
  requireUserWritable(projectId, ids.map((v, i) => ({ space: v.space, path: ['items', i], what: named('view', v) })));
  requireSpacesWritable(services.access, ids.map((v, i) => ({ space: v.space, path: ['items', i, 'space'] })));
  return write(services, projectId, async (db) => {
    const schema = await loadSchema(db, projectId);
    const deleted = viewsNamed(schema, ids);
    for (const v of deleted) await db.run(sql`DELETE FROM dm_views WHERE project_id = ${projectId} AND id = ${v.id}`);
    if (deleted.length > 0) await schemaChanged(db, projectId);
    return { items: deleted.map((v) => ({ space: v.definition.space, externalId: v.definition.externalId, version: v.definition.version })) };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Data models

interface VersionedRow {
  id: number;
  project_id?: number;
  definition: string;
  created_time: number;
  last_updated_time: number;
}

function dataModelRead(schema: ProjectSchema, row: VersionedRow, inlineViews: boolean) {
  const m = dataModelFromRow(row);
  return dataModelReadForm(
    m.definition,
    metadata(m),
    inlineViews ? (id) => (schema.views.has(viewKey(id)) ? viewRead(schema, schema.views.get(viewKey(id))!) : undefined) : undefined,
  );
}

export async function applyDataModels(services: Services, projectId: number, items: readonly DataModelCreate[]) {
  requireUserWritable(projectId, items.map((m, i) => ({ space: m.space, path: ['items', i], what: named('data model', m) })));
  requireSpacesWritable(services.access, items.map((m, i) => ({ space: m.space, path: ['items', i, 'space'] })));
  const models = normalizeDataModels(items);
  const now = services.now();
  return write(services, projectId, async (db) => {
    const inline = new Map<string, { def: ViewDefinition; path: Path }>();
    models.forEach((m, i) => m.inlineViews.forEach((v) => inline.set(viewKey(v), { def: v, path: ['items', i, 'views', m.definition.views.findIndex((x) => viewKey(x) === viewKey(v))] })));
    requireUserWritable(projectId, [...inline.values()].map(({ def, path }) => ({ space: def.space, path, what: named('view', def) })));
    requireSpacesWritable(services.access, [...inline.values()].map(({ def, path }) => ({ space: def.space, path })));
    await requireSpaces(db, projectId, [...models.map((m) => m.definition.space), ...[...inline.values()].map((v) => v.def.space)]);
    const schema = (await loadSchema(db, projectId)).restrictedTo(schemaSpaces(services));
    await putViews(db, projectId, schema, [...inline.values()].map((v) => v.def), [...inline.values()].map((v) => v.path), now);
    const out: VersionedRow[] = [];
    for (const [i, { definition: d }] of models.entries()) {
      const unknown = d.views.filter((v) => !schema.views.has(viewKey(v)));
      if (unknown.length > 0) throw missingViews(unknown, ['items', i, 'views']);
      const existing = await db.get<VersionedRow>(
        sql`SELECT id, definition, created_time, last_updated_time FROM dm_data_models WHERE project_id = ${projectId} AND space = ${d.space} AND external_id = ${d.externalId} AND version = ${d.version}`,
      );
      if (existing) {
        if (isDeepStrictEqual(JSON.parse(existing.definition), JSON.parse(JSON.stringify(d)))) {
          out.push(existing);
          continue;
        }
        await db.run(sql`UPDATE dm_data_models SET definition = ${JSON.stringify(d)}, last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${existing.id}`);
        out.push({ ...existing, definition: JSON.stringify(d), last_updated_time: now });
        continue;
      }
      const [id] = await allocateIds(db, 'dm_data_models', 1);
      await db.run(
        sql`INSERT INTO dm_data_models (id, project_id, space, external_id, version, definition, created_time, last_updated_time) VALUES (${id}, ${projectId}, ${d.space}, ${d.externalId}, ${d.version}, ${JSON.stringify(
          d,
        )}, ${now}, ${now})`,
      );
      out.push({ id, definition: JSON.stringify(d), created_time: now, last_updated_time: now });
    }
    await requireWithinLimit(db, projectId, 'dm_views', projectLimits(modelsSettings(services).limits).views, 'view versions');
    await requireWithinLimit(db, projectId, 'dm_data_models', projectLimits(modelsSettings(services).limits).dataModels, 'data model versions');
    return { items: out.map((r) => dataModelRead(schema, r, false)) };
  });
}

export async function listDataModels(
  services: Services,
  projectId: number,
  q: { limit?: number; cursor?: string; space?: string; inlineViews?: boolean; allVersions?: boolean; includeGlobal?: boolean },
) {
  const schema = q.inlineViews ? await visibleSchema(services, projectId) : undefined;
  const conditions = [listScope(projectId, q.includeGlobal, 'm.')];
  if (q.space !== undefined) conditions.push(sql`m.space = ${q.space}`);
  const scope = schemaCondition(services.access, 'm.');
  if (scope) conditions.push(scope);
  if (!q.allVersions) {
    conditions.push(
      Sql.raw(
        'NOT EXISTS (SELECT 1 FROM dm_data_models w WHERE w.project_id = m.project_id AND w.space = m.space AND w.external_id = m.external_id AND (w.created_time > m.created_time OR (w.created_time = m.created_time AND w.id > m.id)))',
      ),
    );
  }
  const page = await catalogPage<VersionedRow>(
    services,
    Sql.raw('SELECT m.id, m.project_id, m.definition, m.created_time, m.last_updated_time FROM dm_data_models m'),
    conditions,
    q.limit ?? 10,
    q.cursor,
    { op: 'datamodels', space: q.space, allVersions: q.allVersions ?? false, includeGlobal: q.includeGlobal ?? false },
    'm.',
  );
  return {
    items: page.rows.map((r) => (schema ? dataModelRead(schema, r, true) : dataModelRead(undefined as never, r, false))),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

async function dataModelsNamed(db: Pick<Queryable, 'all'>, projectId: number, ids: ReadonlyArray<{ space: string; externalId: string; version?: string }>): Promise<Array<VersionedRow & { key: string }>> {
  const out = new Map<string, VersionedRow & { key: string }>();
  for (const id of ids) {
    const rows = await db.all<VersionedRow & { version: string }>(
      sql`SELECT id, project_id, version, definition, created_time, last_updated_time FROM dm_data_models WHERE ${projectOrGlobal(projectId)} AND space = ${id.space} AND external_id = ${id.externalId}${
        id.version !== undefined ? sql` AND version = ${id.version}` : Sql.raw('')
      } ORDER BY id`,
    );
    for (const r of rows) {
      const key = viewKey({ space: id.space, externalId: id.externalId, version: r.version });
      out.set(key, { ...r, key });
    }
  }
  return [...out.values()];
}

export async function dataModelsByIds(services: Services, projectId: number, ids: ReadonlyArray<{ space: string; externalId: string; version?: string }>, inlineViews = false) {
  const schema = inlineViews ? await visibleSchema(services, projectId) : undefined;
  const rows = (await dataModelsNamed(services.reads, projectId, ids)).filter((r) => inSchemaScope(services.access, r.key.split(':')[0]));
  return { items: rows.map((r) => (schema ? dataModelRead(schema, r, true) : dataModelRead(undefined as never, r, false))) };
}

export async function deleteDataModels(services: Services, projectId: number, ids: readonly ViewId[]) {
  requireUserWritable(projectId, ids.map((m, i) => ({ space: m.space, path: ['items', i], what: named('data model', m) })));
  requireSpacesWritable(services.access, ids.map((v, i) => ({ space: v.space, path: ['items', i, 'space'] })));
  return write(services, projectId, async (db) => {
    const rows = await dataModelsNamed(db, projectId, ids);
    for (const r of rows) await db.run(sql`DELETE FROM dm_data_models WHERE project_id = ${projectId} AND id = ${r.id}`);
    return {
      items: rows.map((r) => {
        const d = JSON.parse(r.definition) as { space: string; externalId: string; version: string };
        return { space: d.space, externalId: d.externalId, version: d.version };
      }),
    };
  });
}
