/**
 * The catalog of a project's definitions, read from and written to the store: spaces, containers (with
 * their table layout and validity states), views and data models. A request reads the project's schema
 * once (`loadSchema`) and resolves views against it; writes go through the functions here, in the
 * request's transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../storage/store.js';
import { Sql, sql } from '../../storage/sql.js';
import type { ContainerDefinition, ContainerStates } from './containers.js';
import type { ContainerLayout } from './container-tables.js';
import type { DataModelDefinition } from './data-models.js';
import { containerKey, viewKey, type ContainerId, type ViewId } from './identifiers.js';
import type { SchemaMetadata } from './metadata.js';
import { ViewResolver, type SchemaSource } from './view-resolution.js';
import type { ViewDefinition } from './views.js';

export interface Times {
  createdTime: number;
  lastUpdatedTime: number;
  /** Held by the global layer (the core data model), not by the project. */
  isGlobal?: boolean;
}

/**
 * The project id under which the global layer is stored once for every project: the core data model's
 * spaces, containers, views and data model (spaces starting with `cdf_`). Lookups of a project fall back to it;
 * its containers' tables hold each project's rows under that project's id.
 */
export const GLOBAL_PROJECT_ID = 0;

/** The project and the global layer, as a condition on a catalog table's `project_id`. */
export const projectOrGlobal = (projectId: number, column = 'project_id'): Sql => sql`${Sql.raw(column)} IN (${projectId}, ${GLOBAL_PROJECT_ID})`;

export interface StoredContainer extends Times {
  id: number;
  definition: ContainerDefinition;
  layout: ContainerLayout;
  states: ContainerStates;
}

export interface StoredView extends Times {
  id: number;
  definition: ViewDefinition;
}

export interface StoredDataModel extends Times {
  id: number;
  definition: DataModelDefinition;
}

export const metadata = (t: Times): SchemaMetadata => ({ createdTime: t.createdTime, lastUpdatedTime: t.lastUpdatedTime, isGlobal: t.isGlobal ?? false });

interface ContainerRow {
  id: number;
  project_id?: number;
  definition: string;
  layout: string;
  states: string;
  created_time: number;
  last_updated_time: number;
}

interface VersionedRow {
  id: number;
  project_id?: number;
  definition: string;
  created_time: number;
  last_updated_time: number;
}

/** `isGlobal` for a row read with its `project_id` from the global layer. */
const global = (r: { project_id?: number }): { isGlobal?: true } => (r.project_id !== undefined && Number(r.project_id) === GLOBAL_PROJECT_ID ? { isGlobal: true } : {});

export const containerFromRow = (r: ContainerRow): StoredContainer => ({
  id: r.id,
  definition: JSON.parse(r.definition),
  layout: JSON.parse(r.layout),
  states: JSON.parse(r.states),
  createdTime: r.created_time,
  lastUpdatedTime: r.last_updated_time,
  ...global(r),
});

export const viewFromRow = (r: VersionedRow): StoredView => ({
  id: r.id,
  definition: JSON.parse(r.definition),
  createdTime: r.created_time,
  lastUpdatedTime: r.last_updated_time,
  ...global(r),
});

export const dataModelFromRow = (r: VersionedRow): StoredDataModel => ({
  id: r.id,
  definition: JSON.parse(r.definition),
  createdTime: r.created_time,
  lastUpdatedTime: r.last_updated_time,
  ...global(r),
});

/** A set of spaces, with a key that names it: equal sets have equal keys. */
export interface SpaceSet {
  readonly key: string;
  has(space: string): boolean;
}

/** Restricted schemas a shared schema keeps, one per set of spaces: a process serves few distinct scopes. */
const RESTRICTED_MAX = 64;

/**
 * The containers and views of a project, as the resolver reads them. Definitions applied in the current
 * request are put in with `putContainer` and `putView`, so that what is being applied resolves against
 * itself and the stored schema together.
 */
export class ProjectSchema implements SchemaSource {
  readonly containers = new Map<string, StoredContainer>();
  readonly views = new Map<string, StoredView>();
  private resolverCache?: ViewResolver;
  /** Shared by the requests of a process (see `readSchema`): changing it is a bug. */
  private shared = false;
  private restrictions?: Map<string, ProjectSchema>;

  container(id: ContainerId): ContainerDefinition | undefined {
    return this.containers.get(containerKey(id))?.definition;
  }

  view(id: ViewId): ViewDefinition | undefined {
    return this.views.get(viewKey(id))?.definition;
  }

  stored(id: ContainerId): StoredContainer | undefined {
    return this.containers.get(containerKey(id));
  }

  putContainer(c: StoredContainer): void {
    this.mutable();
    this.containers.set(containerKey(c.definition), c);
    this.resolverCache = undefined;
  }

  putView(v: StoredView): void {
    this.mutable();
    this.views.set(viewKey(v.definition), v);
    this.resolverCache = undefined;
  }

  deleteContainer(id: ContainerId): void {
    this.mutable();
    this.containers.delete(containerKey(id));
    this.resolverCache = undefined;
  }

  deleteView(id: ViewId): void {
    this.mutable();
    this.views.delete(viewKey(id));
    this.resolverCache = undefined;
  }

  /**
   * The schema as it is seen from `spaces`: their containers and views only, so that views resolve as if the
   * others did not exist (what they implement or map elsewhere is left out, as when it is deleted). The same
   * schema when `spaces` is undefined (every space); a shared one for a shared schema.
   */
  restrictedTo(spaces: SpaceSet | undefined): ProjectSchema {
    if (!spaces) return this;
    const kept = this.restrictions?.get(spaces.key);
    if (kept) return kept;
    const out = new ProjectSchema();
    for (const [key, c] of this.containers) if (spaces.has(c.definition.space)) out.containers.set(key, c);
    for (const [key, v] of this.views) if (spaces.has(v.definition.space)) out.views.set(key, v);
    if (!this.shared) return out;
    this.restrictions ??= new Map();
    if (this.restrictions.size >= RESTRICTED_MAX) this.restrictions.clear();
    this.restrictions.set(spaces.key, out.share());
    return out;
  }

  share(): this {
    this.shared = true;
    return this;
  }

  private mutable(): void {
    if (this.shared) throw new Error('a shared project schema cannot change; load one with loadSchema to apply definitions');
  }

  /** Views resolved against the schema as it is now (a new resolver after every change). */
  get resolver(): ViewResolver {
    return (this.resolverCache ??= new ViewResolver(this));
  }

  states = (id: ContainerId): ContainerStates | undefined => this.stored(id)?.states;
}

/**
 * The parsed rows of the global layer, by table, id and times: requests never change them, so a process
 * parses each once instead of at every request (the core data model is most of a small project's schema).
 * A row written again (a new catalog seeded) has a new last-updated time, so it is parsed again; a build has
 * one catalog, so rows of the same id and times hold the same definition in any database it serves.
 */
const parsedGlobal = new Map<string, StoredContainer | StoredView>();
const PARSED_GLOBAL_LIMIT = 4096;

const globalKey = (table: string, r: { id: number; created_time: number; last_updated_time: number }) => `${table}:${r.id}:${r.created_time}:${r.last_updated_time}`;

/** A column's value on the project's rows; null on the global layer's, which come from `parsedGlobal`. */
const unlessGlobal = (column: string) => `CASE WHEN project_id = ${GLOBAL_PROJECT_ID} THEN NULL ELSE ${column} END AS ${column}`;

/** The rows of `table` read with unlessGlobal, parsed: the global layer's from the cache, read in full on a miss. */
async function parseRows<R extends { id: number; definition: string | null; created_time: number; last_updated_time: number }, T>(
  db: Pick<Queryable, 'all'>,
  table: string,
  columns: string,
  rows: R[],
  parse: (r: R) => T,
): Promise<T[]> {
  const missing = rows.some((r) => r.definition === null && !parsedGlobal.has(globalKey(table, r)));
  if (missing) {
    if (parsedGlobal.size > PARSED_GLOBAL_LIMIT) parsedGlobal.clear();
    const full = await db.all<R>(Sql.raw(`SELECT ${columns} FROM ${table} WHERE project_id = ${GLOBAL_PROJECT_ID}`));
    for (const r of full) parsedGlobal.set(globalKey(table, r), parse(r) as StoredContainer | StoredView);
  }
  return rows.map((r) => (r.definition === null ? (parsedGlobal.get(globalKey(table, r)) as T) : parse(r)));
}

const CONTAINER_COLUMNS = 'id, project_id, definition, layout, states, created_time, last_updated_time';
const VIEW_COLUMNS = 'id, project_id, definition, created_time, last_updated_time';

export async function loadSchema(db: Pick<Queryable, 'all'>, projectId: number): Promise<ProjectSchema> {
  const schema = new ProjectSchema();
  const containers = await db.all<ContainerRow>(
    sql`SELECT id, project_id, ${Sql.raw(['definition', 'layout', 'states'].map(unlessGlobal).join(', '))}, created_time, last_updated_time FROM dm_containers WHERE ${projectOrGlobal(projectId)}`,
  );
  for (const c of await parseRows(db, 'dm_containers', CONTAINER_COLUMNS, containers, containerFromRow)) schema.putContainer(c);
  const views = await db.all<VersionedRow>(sql`SELECT id, project_id, ${Sql.raw(unlessGlobal('definition'))}, created_time, last_updated_time FROM dm_views WHERE ${projectOrGlobal(projectId)}`);
  for (const v of await parseRows(db, 'dm_views', VIEW_COLUMNS, views, viewFromRow)) schema.putView(v);
  return schema;
}

/**
 * The schema of a project as the requests of this process share it: read once per change of the project's
 * containers and views, whichever process makes it. Each call reads the project's token (one indexed
 * row); the schema read under the same token is still the stored one, since every change replaces the
 * token in its own transaction. The token is read before the schema, so a schema read across a change
 * is kept under the older token and read again by the next request. A project whose definitions have
 * not changed since this table existed has no token and is read each time. The answer is shared: it must
 * not be changed (`loadSchema` gives one to apply definitions to).
 */
export async function readSchema(db: Pick<Queryable, 'all'>, projectId: number): Promise<ProjectSchema> {
  const [row] = await db.all<{ token: string }>(sql`SELECT token FROM dm_schema_versions WHERE project_id = ${projectId}`);
  if (!row) return loadSchema(db, projectId);
  const cached = sharedSchemas.get(projectId);
  if (cached && cached.token === row.token) return cached.schema;
  const schema = (await loadSchema(db, projectId)).share();
  if (sharedSchemas.size >= SHARED_SCHEMAS_MAX && !sharedSchemas.has(projectId)) sharedSchemas.delete(sharedSchemas.keys().next().value!);
  sharedSchemas.set(projectId, { token: row.token, schema });
  return schema;
}

/**
 * Schemas by project id. Tokens are random, so a schema is reused only for the database that gave it, also
 * when one process serves several databases with the same project ids (tests do).
 */
const sharedSchemas = new Map<number, { token: string; schema: ProjectSchema }>();
const SHARED_SCHEMAS_MAX = 1000;

/** One of the project's own containers by its id, as stored now. */
export async function containerById(db: Pick<Queryable, 'all'>, projectId: number, id: number): Promise<StoredContainer | undefined> {
  const [row] = await db.all<ContainerRow>(sql`SELECT ${Sql.raw(CONTAINER_COLUMNS)} FROM dm_containers WHERE project_id = ${projectId} AND id = ${id}`);
  return row && containerFromRow(row);
}

/** Stores a changed container's definition, layout, states and time (its table is changed apart). */
export async function saveContainer(db: Queryable, projectId: number, c: StoredContainer): Promise<void> {
  await db.run(
    sql`UPDATE dm_containers SET definition = ${JSON.stringify(c.definition)}, layout = ${JSON.stringify(c.layout)}, states = ${JSON.stringify(
      c.states,
    )}, last_updated_time = ${c.lastUpdatedTime} WHERE project_id = ${projectId} AND id = ${c.id}`,
  );
}

/** Marks the project's containers or views as changed, in the transaction that changes them. */
export async function schemaChanged(db: Queryable, projectId: number): Promise<void> {
  await db.run(
    sql`INSERT INTO dm_schema_versions (project_id, token) VALUES (${projectId}, ${randomUUID()}) ON CONFLICT (project_id) DO UPDATE SET token = excluded.token`,
  );
}

/** The spaces among `spaces` that the project has, its own or global. */
export async function existingSpaces(db: Queryable, projectId: number, spaces: readonly string[]): Promise<Set<string>> {
  if (spaces.length === 0) return new Set();
  const rows = await db.all<{ space: string }>(sql`SELECT space FROM dm_spaces WHERE ${projectOrGlobal(projectId)} AND space IN (${[...new Set(spaces)]})`);
  return new Set(rows.map((r) => r.space));
}
