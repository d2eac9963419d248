/**
 * Simulators: their own rules on top of the shared item operations. What an item hangs off (a model's
 * simulator, a revision's model, a routine's integration, a run's routine revision) must exist where the
 * request sees it, or the write is a 400 naming it; what hangs off an item is deleted with it. A model keeps
 * at most 200 revisions; a run is `ready` for the integration its routine names, or `queued` until a
 * connector of its simulator takes it; connectors report a run's status and data, at most 100 KB per run.
 */
import { accessFor, FULL_ACCESS, inScope, scopeCondition } from '../../auth/access.js';
import { formatCapability, grantsFor, type Capability, type Principal } from '../../auth/principal.js';
import { ApiError, badRequest, forbidden, formatPath, missingItems } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { and, inLeaf, prefixLeaf, propertyTarget, rangeLeaf, equalsLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import type { RefInput } from '../../query/refs.js';
import { runAggregate } from '../../query/aggregate.js';
import type { Item, Values } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { createItems, fromModel, inWrite, listItems, retrieveItems, retrieveItemsJson, updateItems, type Path, type ResourceSpec, type UpdateItem, type WriteContext } from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { fileCatalog } from '../files/model.js';
import {
  ACL,
  integrationModel,
  logModel,
  modelModel,
  modelRevisionDataModel,
  modelRevisionModel,
  routineModel,
  routineRevisionModel,
  runModel,
  SIMULATOR_LIMITS,
  simulatorModel,
} from './model.js';
import type {
  IntegrationCreate,
  IntegrationFilter,
  ModelCreate,
  ModelFilter,
  ModelRevisionCreate,
  ModelRevisionFilter,
  RoutineConfiguration,
  RoutineCreate,
  RoutineFilter,
  RoutineRevisionCreate,
  RoutineRevisionFilter,
  RunCreate,
  RunFilter,
  RunReport,
} from './schema.js';

type Project = { id: number; name: string };
type Sort = Array<{ property: string; order: 'asc' | 'desc' }> | undefined;
export interface ListBody<F> {
  filter?: F;
  limit?: number;
  cursor?: string;
  sort?: Sort;
}

const dataSetRef = [{ field: 'dataSetId', catalog: dataSetCatalog }];

// Deleting what hangs off an item. Logs belong to integrations, model revisions and runs; data to model revisions.

/** The deletes of what hangs off the rows of each table that `rows` (`FROM ... WHERE ...`) selects. */
const logsOf = (projectId: number, rows: Sql) => sql`DELETE FROM simulator_logs WHERE project_id = ${projectId} AND id IN (SELECT log_id ${rows})`;
const DEPENDENTS: Readonly<Record<string, ReadonlyArray<(projectId: number, rows: Sql) => Sql>>> = {
  simulator_integrations: [logsOf],
  simulation_runs: [logsOf],
  simulator_model_revisions: [
    logsOf,
    (projectId, rows) => sql`DELETE FROM simulator_model_revision_data WHERE project_id = ${projectId} AND model_revision_external_id IN (SELECT external_id ${rows})`,
  ],
};

/** Deletes what hangs off the rows of `table` that `where` selects (their logs and data), not the rows. */
async function removeDependents(db: Queryable, projectId: number, table: string, where: Sql): Promise<Sql> {
  const rows = sql`FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND ${where}`;
  for (const remove of DEPENDENTS[table] ?? []) await db.run(remove(projectId, rows));
  return rows;
}

/** Deletes the rows of `table` that `where` selects, with their logs and data. */
async function removeWhere(db: Queryable, projectId: number, table: string, where: Sql): Promise<void> {
  await db.run(sql`DELETE ${await removeDependents(db, projectId, table, where)}`);
}

const within = (column: string, values: readonly string[]) => sql`${Sql.raw(column)} IN (${values})`;

async function externalIdsOf(db: Queryable, projectId: number, table: string, ids: readonly number[]): Promise<string[]> {
  const rows = await db.all<{ external_id: string }>(sql`SELECT external_id FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND id IN (${ids})`);
  return rows.map((r) => r.external_id);
}

async function removeRoutines(db: Queryable, projectId: number, where: Sql): Promise<void> {
  const routines = (await db.all<{ external_id: string }>(sql`SELECT external_id FROM simulator_routines WHERE project_id = ${projectId} AND ${where}`)).map((r) => r.external_id);
  if (routines.length === 0) return;
  await removeWhere(db, projectId, 'simulator_routine_revisions', within('routine_external_id', routines));
  await removeWhere(db, projectId, 'simulation_runs', within('routine_external_id', routines));
  await removeWhere(db, projectId, 'simulator_routines', within('external_id', routines));
}

/** The logs of the items `ids` of `table`, which are about to be deleted. */
async function removeOwnLogs(db: Queryable, projectId: number, table: string, ids: readonly number[]): Promise<void> {
  await db.run(sql`DELETE FROM simulator_logs WHERE project_id = ${projectId} AND id IN (SELECT log_id FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND id IN (${ids}))`);
}

export const simulatorSpec: ResourceSpec<unknown> = {
  ...fromModel(simulatorModel),
  async beforeDelete(ids, { db, projectId }: WriteContext) {
    const simulators = await externalIdsOf(db, projectId, 'simulators', ids);
    if (simulators.length === 0) return;
    const bySimulator = within('simulator_external_id', simulators);
    await removeRoutines(db, projectId, bySimulator);
    for (const table of ['simulation_runs', 'simulator_model_revisions', 'simulator_models', 'simulator_integrations']) await removeWhere(db, projectId, table, bySimulator);
  },
};

export const integrationSpec: ResourceSpec<unknown> = {
  ...fromModel(integrationModel),
  references: dataSetRef,
  async beforeDelete(ids, { db, projectId }: WriteContext) {
    const integrations = await externalIdsOf(db, projectId, 'simulator_integrations', ids);
    await removeRoutines(db, projectId, within('simulator_integration_external_id', integrations));
    await removeWhere(db, projectId, 'simulation_runs', within('simulator_integration_external_id', integrations));
    await removeOwnLogs(db, projectId, 'simulator_integrations', ids);
  },
};

export const modelSpec: ResourceSpec<unknown> = {
  ...fromModel(modelModel),
  references: dataSetRef,
  async beforeDelete(ids, { db, projectId }: WriteContext) {
    const models = await externalIdsOf(db, projectId, 'simulator_models', ids);
    await removeRoutines(db, projectId, within('model_external_id', models));
    await removeWhere(db, projectId, 'simulation_runs', within('model_external_id', models));
    await removeWhere(db, projectId, 'simulator_model_revisions', within('model_external_id', models));
  },
};

export const modelRevisionSpec: ResourceSpec<unknown> = {
  ...fromModel(modelRevisionModel),
  references: [{ field: 'fileId', catalog: fileCatalog }],
  async beforeDelete(ids, { db, projectId }: WriteContext) {
    const revisions = await externalIdsOf(db, projectId, 'simulator_model_revisions', ids);
    await removeWhere(db, projectId, 'simulation_runs', within('model_revision_external_id', revisions));
    // The revisions themselves are deleted by the shared delete, after this.
    await removeDependents(db, projectId, 'simulator_model_revisions', sql`id IN (${ids})`);
  },
};

const modelRevisionDataSpec: ResourceSpec<unknown> = fromModel(modelRevisionDataModel);

export const routineSpec: ResourceSpec<unknown> = {
  ...fromModel(routineModel),
  async beforeDelete(ids, { db, projectId }: WriteContext) {
    await removeRoutines(db, projectId, sql`id IN (${ids})`);
  },
};

export const routineRevisionSpec: ResourceSpec<unknown> = fromModel(routineRevisionModel);
export const runSpec: ResourceSpec<unknown> = fromModel(runModel);
export const logSpec: ResourceSpec<unknown> = fromModel(logModel);

/** The item of `spec` named `{externalId}` that the request sees, or a 400 naming it at `path`. */
async function existing(spec: ResourceSpec<unknown>, services: Services, projectId: number, externalId: string, path: Path): Promise<Item> {
  const [found] = await retrieveItems(spec, services, projectId, [{ externalId }], true);
  if (!found) throw badRequest(`${formatPath(path)}: the ${spec.catalog.noun} ${JSON.stringify(externalId)} does not exist`);
  return found;
}

/**
 * Takes the row of item `id` of `table` until the write ends, so that writes that count or create what hangs
 * off it (revisions of a model or routine, the data of a model revision) run one at a time.
 */
async function takeRow(db: Queryable, projectId: number, table: string, id: number): Promise<void> {
  await db.run(sql`UPDATE ${Sql.raw(table)} SET last_updated_time = last_updated_time WHERE project_id = ${projectId} AND id = ${id}`);
}

/** Logs for new items, in the items' data sets; their ids in order. */
async function createLogs(services: Services, projectId: number, logs: ReadonlyArray<{ dataSetId: number; severity?: string }>): Promise<number[]> {
  return (await createItems(logSpec, services, projectId, logs)).map((l) => l.id);
}

const sortOf = (sort: Sort) => sort?.map((s) => ({ property: [s.property], order: s.order }));
/** A list request as the shared list reads it: the reference's default limit is 1000 here. */
const listInput = <F>(body: ListBody<F>, defaultLimit = 1000) => ({ ...body, limit: body.limit ?? defaultLimit, sort: sortOf(body.sort) });

// Simulators.

/**
 * The request's services for a simulator's own operations: a simulator is in no data set, and describes a
 * kind of connector rather than data, so any grant of the operation's action reaches every simulator.
 */
export const forSimulators = (services: Services): Services => ({ ...services, access: FULL_ACCESS });

// Integrations.

/** An integration as the API gives it: active while its connector's heartbeats are recent. */
function integrationJson(services: Services, item: Item): Item {
  return { ...item, active: (item.heartbeat as number) >= services.now() - SIMULATOR_LIMITS.activeHeartbeatMs };
}

export function createIntegrations(services: Services, projectId: number, items: readonly IntegrationCreate[]) {
  return inWrite(services, async (services) => {
    for (const [i, item] of items.entries()) await existing(simulatorSpec, forSimulators(services), projectId, item.simulatorExternalId, ['items', i, 'simulatorExternalId']);
    const logIds = await createLogs(services, projectId, items.map((item) => ({ dataSetId: item.dataSetId })));
    const created = await createItems(integrationSpec, services, projectId, items.map((item, i) => ({ ...item, logId: logIds[i] })));
    return created.map((item) => integrationJson(services, item));
  });
}

export async function listIntegrations(services: Services, projectId: number, body: { filter?: IntegrationFilter; limit?: number }) {
  const c = integrationModel.catalog;
  const f = body.filter ?? {};
  const since = services.now() - SIMULATOR_LIMITS.activeHeartbeatMs;
  const active = f.active === undefined ? undefined : f.active ? rangeLeaf(c, 'heartbeat', { min: since }) : rangeLeaf(c, 'heartbeat', { max: since - 1 });
  const page = await listItems(integrationSpec, services, projectId, { limit: body.limit ?? 1000 }, and([inLeaf(c, 'simulatorExternalId', f.simulatorExternalIds), active]));
  return { items: page.items.map((item) => integrationJson(services, item)) };
}

export async function updateIntegrations(services: Services, projectId: number, items: readonly UpdateItem[]) {
  return { items: (await updateItems(integrationSpec, services, projectId, items)).map((item) => integrationJson(services, item)) };
}

// Models.

export function createModels(services: Services, projectId: number, items: readonly ModelCreate[]) {
  return inWrite(services, async (services) => {
    for (const [i, item] of items.entries()) await existing(simulatorSpec, forSimulators(services), projectId, item.simulatorExternalId!, ['items', i, 'simulatorExternalId']);
    return createItems(modelSpec, services, projectId, items);
  });
}

export function modelFilterNode(f: ModelFilter | undefined): FilterNode | undefined {
  const c = modelModel.catalog;
  return and([inLeaf(c, 'simulatorExternalId', f?.simulatorExternalIds), prefixLeaf(c, 'externalId', f?.externalIdPrefix), inLeaf(c, 'dataSetId', f?.dataSetIds)]);
}

export function listModels(services: Services, projectId: number, body: ListBody<ModelFilter>) {
  return listItems(modelSpec, services, projectId, listInput(body), modelFilterNode(body.filter));
}

export function countModels(services: Services, projectId: number, filter: ModelFilter | undefined) {
  return runAggregate(services, modelModel.catalog, projectId, { aggregate: 'count', filter: modelFilterNode(filter) });
}

// Model revisions.

const DELETE: Capability = { acl: ACL, action: 'DELETE' };

/** The newest revision of each model (or routine), by version number: what a list gives unless it asks for all versions. */
function newestNode(table: string, parentColumn: string, catalog: typeof modelRevisionModel.catalog, projectId: number): FilterNode {
  const t = Sql.raw(table);
  const parent = Sql.raw(parentColumn);
  const ids = sql`SELECT r.id FROM ${t} r WHERE r.project_id = ${projectId} AND r.version_number =
    (SELECT max(n.version_number) FROM ${t} n WHERE n.project_id = r.project_id AND n.${parent} = r.${parent})`;
  return { op: 'inSet', target: propertyTarget(catalog, 'id'), ids };
}

/** The newest revision of a model or routine that the request sees, if it has one. */
async function newestRevision(services: Services, projectId: number, spec: ResourceSpec<unknown>, parentColumn: string, parent: string): Promise<Item | undefined> {
  const t = spec.table.table;
  const scope = scopeCondition(services.access, spec.catalog, t);
  const row = await services.db.get<{ id: number | string }>(
    sql`SELECT id FROM ${Sql.raw(t)} WHERE project_id = ${projectId} AND ${Sql.raw(parentColumn)} = ${parent}${scope ? sql` AND ${scope}` : Sql.raw('')}
      ORDER BY version_number DESC LIMIT 1`,
  );
  return row && (await retrieveItems(spec, services, projectId, [{ id: Number(row.id) }]))[0];
}

async function revisionCount(db: Queryable, projectId: number, table: string, parentColumn: string, parent: string) {
  const row = await db.get<{ n: number | string; v: number | string | null }>(
    sql`SELECT count(*) AS n, max(version_number) AS v FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND ${Sql.raw(parentColumn)} = ${parent}`,
  );
  return { count: Number(row?.n ?? 0), newest: Number(row?.v ?? 0) };
}

/** Refuses `deleteOldest` without `simulatorsAcl:DELETE` over the model's data set. */
function requireDeleteOldest(principal: Principal, project: Project, model: Item, path: Path): void {
  const access = accessFor(DELETE, grantsFor(principal, DELETE, project.name));
  if (inScope(access, { dataSetId: model.dataSetId as number })) return;
  throw forbidden(`${formatPath(path)}: deleteOldest removes revisions, which needs ${formatCapability(DELETE)} on the data set ${model.dataSetId as number} of the simulator model`);
}

export function createModelRevisions(services: Services, principal: Principal, project: Project, items: readonly ModelRevisionCreate[], deleteOldest = false) {
  const projectId = project.id;
  return inWrite(services, async (services) => {
    const { db } = services;
    const out: Item[] = [];
    for (const [i, item] of items.entries()) {
      const path: Path = ['items', i];
      const model = await existing(modelSpec, services, projectId, item.modelExternalId, [...path, 'modelExternalId']);
      if (deleteOldest) requireDeleteOldest(principal, project, model, path);
      // Revisions of one model are created one at a time, so none is counted twice.
      await takeRow(db, projectId, 'simulator_models', model.id);
      const { count, newest } = await revisionCount(db, projectId, 'simulator_model_revisions', 'model_external_id', item.modelExternalId);
      if (count >= SIMULATOR_LIMITS.modelRevisions) {
        if (!deleteOldest) {
          throw badRequest(
            `${formatPath(path)}: the simulator model ${JSON.stringify(item.modelExternalId)} holds ${count} revisions, the most a model keeps ` +
              `(${SIMULATOR_LIMITS.modelRevisions}); send deleteOldest: true to replace its oldest revision`,
          );
        }
        await removeWhere(
          db,
          projectId,
          'simulator_model_revisions',
          sql`id = (SELECT id FROM simulator_model_revisions WHERE project_id = ${projectId} AND model_external_id = ${item.modelExternalId} ORDER BY version_number LIMIT 1)`,
        );
      }
      const dataSetId = model.dataSetId as number;
      const [logId] = await createLogs(services, projectId, [{ dataSetId }]);
      const values = { ...item, simulatorExternalId: model.simulatorExternalId, dataSetId, createdByUserId: principal.subject, status: 'unknown', versionNumber: newest + 1, logId };
      try {
        out.push(...(await createItems(modelRevisionSpec, services, projectId, [values])));
      } catch (error) {
        throw atItem(error, i);
      }
    }
    return out;
  });
}

/** An error of a one-item write, its paths moved to item `i` of the request. */
function atItem(error: unknown, i: number): unknown {
  if (!(error instanceof ApiError) || i === 0) return error;
  error.message = error.message.replace(/\bitems\[0\]/g, `items[${i}]`);
  return error;
}

export function modelRevisionFilterNode(projectId: number, f: ModelRevisionFilter | undefined): FilterNode | undefined {
  const c = modelRevisionModel.catalog;
  return and([
    inLeaf(c, 'modelExternalId', f?.modelExternalIds),
    inLeaf(c, 'simulatorExternalId', f?.simulatorExternalIds),
    rangeLeaf(c, 'createdTime', f?.createdTime),
    rangeLeaf(c, 'lastUpdatedTime', f?.lastUpdatedTime),
    f?.allVersions ? undefined : newestNode('simulator_model_revisions', 'model_external_id', c, projectId),
  ]);
}

export function listModelRevisions(services: Services, projectId: number, body: ListBody<ModelRevisionFilter>) {
  return listItems(modelRevisionSpec, services, projectId, listInput(body), modelRevisionFilterNode(projectId, body.filter));
}

// Model revision data.

const dataRefs = (externalIds: Iterable<string>) => [...externalIds].map((modelRevisionExternalId) => ({ modelRevisionExternalId }) as RefInput);

/**
 * The data of the model revisions named, in the request's order. Each revision must be one the request sees
 * (a 400 with `missing` otherwise); one whose connector has written no data yet is left out.
 */
export async function listModelRevisionData(services: Services, projectId: number, externalIds: readonly string[]) {
  const data = await retrieveItemsJson(modelRevisionDataSpec, services, projectId, dataRefs(externalIds), true);
  const seen = new Set((await retrieveItems(modelRevisionSpec, services, projectId, externalIds.map((externalId) => ({ externalId })), true)).map((r) => r.externalId));
  const missing = externalIds.filter((externalId) => !seen.has(externalId));
  if (missing.length) throw missingItems(missing.map((modelRevisionExternalId) => ({ modelRevisionExternalId })));
  return data;
}

/**
 * A connector's update of model revisions' data: the first one creates the data, in its revision's data
 * set; each `set` replaces the field whole.
 */
export function updateModelRevisionData(services: Services, projectId: number, items: ReadonlyArray<UpdateItem & { modelRevisionExternalId?: string }>) {
  return inWrite(services, async (services) => {
    const absent = new Map<string, Values>();
    for (const [i, item] of items.entries()) {
      const externalId = item.modelRevisionExternalId!;
      const revision = await existing(modelRevisionSpec, services, projectId, externalId, ['items', i, 'modelRevisionExternalId']);
      // Connectors racing to write a revision's first data wait here, so one creates it and the others find it.
      await takeRow(services.db, projectId, 'simulator_model_revisions', revision.id);
      absent.set(externalId, { modelRevisionExternalId: externalId, dataSetId: revision.dataSetId });
    }
    for (const stored of await retrieveItems(modelRevisionDataSpec, services, projectId, dataRefs(absent.keys()), true)) absent.delete(stored.modelRevisionExternalId as string);
    if (absent.size) await createItems(modelRevisionDataSpec, services, projectId, [...absent.values()]);
    return { items: await updateItems(modelRevisionDataSpec, services, projectId, items) };
  });
}

// Routines.

export function createRoutines(services: Services, projectId: number, items: readonly RoutineCreate[]) {
  return inWrite(services, async (services) => {
    const values: Values[] = [];
    for (const [i, item] of items.entries()) {
      const model = await existing(modelSpec, services, projectId, item.modelExternalId, ['items', i, 'modelExternalId']);
      if (item.simulatorIntegrationExternalId !== undefined) {
        const path = ['items', i, 'simulatorIntegrationExternalId'];
        const integration = await existing(integrationSpec, services, projectId, item.simulatorIntegrationExternalId, path);
        if (integration.simulatorExternalId !== model.simulatorExternalId) {
          throw badRequest(
            `${formatPath(path)}: the simulator integration ${JSON.stringify(item.simulatorIntegrationExternalId)} is of the simulator ` +
              `${JSON.stringify(integration.simulatorExternalId)}, not of the model's ${JSON.stringify(model.simulatorExternalId)}`,
          );
        }
      }
      values.push({ ...item, simulatorExternalId: model.simulatorExternalId, dataSetId: model.dataSetId });
    }
    return createItems(routineSpec, services, projectId, values);
  });
}

export function routineFilterNode(f: RoutineFilter | undefined): FilterNode | undefined {
  const c = routineModel.catalog;
  return and([
    inLeaf(c, 'modelExternalId', f?.modelExternalIds),
    inLeaf(c, 'simulatorIntegrationExternalId', f?.simulatorIntegrationExternalIds),
    inLeaf(c, 'simulatorExternalId', f?.simulatorExternalIds),
  ]);
}

export function listRoutines(services: Services, projectId: number, body: ListBody<RoutineFilter>) {
  return listItems(routineSpec, services, projectId, listInput(body), routineFilterNode(body.filter));
}

export function countRoutines(services: Services, projectId: number, filter: RoutineFilter | undefined) {
  return runAggregate(services, routineModel.catalog, projectId, { aggregate: 'count', filter: routineFilterNode(filter) });
}

// Routine revisions.

/** A routine revision as the API gives it: it never changes, so without an update time; in a list, without its inputs, outputs and script unless asked for. */
export function routineRevisionJson({ lastUpdatedTime: _, ...item }: Item, allFields = true): Record<string, unknown> {
  if (allFields) return item;
  const { script: _script, configuration, ...rest } = item;
  const { inputs: _inputs, outputs: _outputs, ...config } = configuration as RoutineConfiguration;
  return { ...rest, configuration: config };
}

/** What the schema cannot say: an enabled schedule has its cron expression, enabled sampling its windows. */
function checkConfiguration({ schedule, dataSampling }: RoutineConfiguration, path: Path): void {
  if (schedule.enabled && schedule.cronExpression === undefined) throw badRequest(`${formatPath([...path, 'schedule', 'cronExpression'])}: an enabled schedule needs a cron expression`);
  for (const field of ['samplingWindow', 'granularity'] as const) {
    if (dataSampling.enabled && dataSampling[field] === undefined) throw badRequest(`${formatPath([...path, 'dataSampling', field])}: enabled data sampling needs ${field}`);
  }
}

export function createRoutineRevisions(services: Services, principal: Principal, projectId: number, items: readonly RoutineRevisionCreate[]) {
  return inWrite(services, async (services) => {
    const out: Item[] = [];
    for (const [i, item] of items.entries()) {
      checkConfiguration(item.configuration, ['items', i, 'configuration']);
      const routine = await existing(routineSpec, services, projectId, item.routineExternalId, ['items', i, 'routineExternalId']);
      await takeRow(services.db, projectId, 'simulator_routines', routine.id);
      const { newest } = await revisionCount(services.db, projectId, 'simulator_routine_revisions', 'routine_external_id', item.routineExternalId);
      const values = {
        ...item,
        configuration: { inputs: [], outputs: [], ...item.configuration },
        simulatorExternalId: routine.simulatorExternalId,
        simulatorIntegrationExternalId: routine.simulatorIntegrationExternalId ?? null,
        modelExternalId: routine.modelExternalId,
        dataSetId: routine.dataSetId,
        createdByUserId: principal.subject,
        versionNumber: newest + 1,
      };
      try {
        out.push(...(await createItems(routineRevisionSpec, services, projectId, [values])));
      } catch (error) {
        throw atItem(error, i);
      }
    }
    return out.map((item) => routineRevisionJson(item));
  });
}

export async function listRoutineRevisions(services: Services, projectId: number, body: ListBody<RoutineRevisionFilter> & { includeAllFields?: boolean }) {
  const c = routineRevisionModel.catalog;
  const f = body.filter;
  const node = and([
    inLeaf(c, 'routineExternalId', f?.routineExternalIds),
    inLeaf(c, 'modelExternalId', f?.modelExternalIds),
    inLeaf(c, 'simulatorIntegrationExternalId', f?.simulatorIntegrationExternalIds),
    inLeaf(c, 'simulatorExternalId', f?.simulatorExternalIds),
    rangeLeaf(c, 'createdTime', f?.createdTime),
    f?.allVersions ? undefined : newestNode('simulator_routine_revisions', 'routine_external_id', c, projectId),
  ]);
  const page = await listItems(routineRevisionSpec, services, projectId, listInput(body, 10), node);
  return { ...page, items: page.items.map((item) => routineRevisionJson(item, body.includeAllFields ?? false)) };
}

// Runs.

type ValueType = 'STRING' | 'DOUBLE' | 'STRING_ARRAY' | 'DOUBLE_ARRAY';
function valueTypeOf(value: unknown): ValueType {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? 'STRING_ARRAY' : 'DOUBLE_ARRAY';
  return typeof value === 'string' ? 'STRING' : 'DOUBLE';
}

/** The routine revision and model revision a run request names, each a 400 naming it when it does not exist. */
async function runTarget(services: Services, projectId: number, item: RunCreate, path: Path) {
  if ('routineExternalId' in item) {
    const routine = await existing(routineSpec, services, projectId, item.routineExternalId, [...path, 'routineExternalId']);
    const routineRevision = await newestRevision(services, projectId, routineRevisionSpec, 'routine_external_id', routine.externalId as string);
    if (!routineRevision) throw badRequest(`${formatPath([...path, 'routineExternalId'])}: the simulator routine ${JSON.stringify(item.routineExternalId)} has no revision to run`);
    const modelRevision = await newestRevision(services, projectId, modelRevisionSpec, 'model_external_id', routine.modelExternalId as string);
    if (!modelRevision) throw badRequest(`${formatPath([...path, 'routineExternalId'])}: the simulator model ${JSON.stringify(routine.modelExternalId)} of the routine has no revision to run`);
    return { routine, routineRevision, modelRevision };
  }
  const routineRevision = await existing(routineRevisionSpec, services, projectId, item.routineRevisionExternalId, [...path, 'routineRevisionExternalId']);
  const modelRevision = await existing(modelRevisionSpec, services, projectId, item.modelRevisionExternalId, [...path, 'modelRevisionExternalId']);
  if (modelRevision.modelExternalId !== routineRevision.modelExternalId) {
    throw badRequest(
      `${formatPath([...path, 'modelRevisionExternalId'])}: the model revision ${JSON.stringify(item.modelRevisionExternalId)} is of the model ` +
        `${JSON.stringify(modelRevision.modelExternalId)}, not of the routine's ${JSON.stringify(routineRevision.modelExternalId)}`,
    );
  }
  const routine = await existing(routineSpec, services, projectId, routineRevision.routineExternalId as string, [...path, 'routineRevisionExternalId']);
  return { routine, routineRevision, modelRevision };
}

export function createRun(services: Services, principal: Principal, projectId: number, item: RunCreate) {
  const path: Path = ['items', 0];
  return inWrite(services, async (services) => {
    const { routine, routineRevision, modelRevision } = await runTarget(services, projectId, item, path);
    const known = new Set(((routineRevision.configuration as RoutineConfiguration).inputs ?? []).map((input) => input.referenceId));
    for (const [k, input] of (item.inputs ?? []).entries()) {
      if (!known.has(input.referenceId)) {
        throw badRequest(`${formatPath([...path, 'inputs', k, 'referenceId'])}: the routine revision ${JSON.stringify(routineRevision.externalId)} has no input ${JSON.stringify(input.referenceId)}`);
      }
    }
    const integrationId = routine.simulatorIntegrationExternalId as string | undefined;
    if (integrationId !== undefined && !item.queue) {
      const [integration] = await retrieveItems(integrationSpec, services, projectId, [{ externalId: integrationId }], true);
      if (!integration || !integrationJson(services, integration).active) {
        throw badRequest(
          `${formatPath(path)}: the simulator integration ${JSON.stringify(integrationId)} of the routine has sent no heartbeat in the last ` +
            `${SIMULATOR_LIMITS.activeHeartbeatMs / 60_000} minutes; send queue: true to queue the run until its connector takes it`,
        );
      }
    }
    const dataSetId = routine.dataSetId as number;
    const [logId] = await createLogs(services, projectId, [{ dataSetId, ...(item.logSeverity ? { severity: item.logSeverity } : {}) }]);
    const now = services.now();
    const inputs = (item.inputs ?? []).map((input) => ({ ...input, valueType: valueTypeOf(input.value), overridden: true }));
    const [run] = await createItems(runSpec, services, projectId, [
      {
        simulatorExternalId: routine.simulatorExternalId,
        simulatorIntegrationExternalId: integrationId ?? null,
        modelExternalId: routine.modelExternalId,
        modelRevisionExternalId: modelRevision.externalId,
        routineExternalId: routine.externalId,
        routineRevisionExternalId: routineRevision.externalId,
        runTime: item.runTime ?? now,
        status: integrationId === undefined ? 'queued' : 'ready',
        runType: item.runType ?? 'external',
        userId: principal.subject,
        logId,
        dataSetId,
        inputs,
        outputs: [],
        reportedBytes: 0,
      },
    ]);
    return [run];
  });
}

export function runFilterNode(f: RunFilter | undefined): FilterNode | undefined {
  const c = runModel.catalog;
  return and([
    equalsLeaf(c, 'status', f?.status),
    equalsLeaf(c, 'runType', f?.runType),
    inLeaf(c, 'simulatorIntegrationExternalId', f?.simulatorIntegrationExternalIds),
    inLeaf(c, 'simulatorExternalId', f?.simulatorExternalIds),
    inLeaf(c, 'modelExternalId', f?.modelExternalIds),
    inLeaf(c, 'routineExternalId', f?.routineExternalIds),
    inLeaf(c, 'routineRevisionExternalId', f?.routineRevisionExternalIds),
    inLeaf(c, 'modelRevisionExternalId', f?.modelRevisionExternalIds),
    rangeLeaf(c, 'createdTime', f?.createdTime),
    rangeLeaf(c, 'simulationTime', f?.simulationTime),
  ]);
}

export function listRuns(services: Services, projectId: number, body: ListBody<RunFilter>) {
  return listItems(runSpec, services, projectId, listInput(body), runFilterNode(body.filter));
}

/** The runs named, as the request sees them: a 400 listing those `missing`. */
async function visibleRuns(services: Services, projectId: number, ids: readonly number[]): Promise<Item[]> {
  return retrieveItems(runSpec, services, projectId, ids.map((id) => ({ id })));
}

export async function runData(services: Services, projectId: number, runIds: readonly number[]) {
  await visibleRuns(services, projectId, runIds);
  const rows = await services.db.all<{ id: number | string; inputs: string | null; outputs: string | null }>(
    sql`SELECT id, inputs, outputs FROM simulation_runs WHERE project_id = ${projectId} AND id IN (${runIds})`,
  );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return {
    items: runIds.map((runId) => {
      const row = byId.get(runId)!;
      return { runId, inputs: JSON.parse(row.inputs ?? '[]'), outputs: JSON.parse(row.outputs ?? '[]') };
    }),
  };
}

/** A connector takes queued runs of its simulator, oldest first: each is `ready` for it, and taken once. */
export function claimRuns(services: Services, projectId: number, body: { simulatorIntegrationExternalId: string; limit?: number }) {
  return inWrite(services, async (services) => {
    const { db } = services;
    const integration = await existing(integrationSpec, services, projectId, body.simulatorIntegrationExternalId, ['simulatorIntegrationExternalId']);
    const scope = scopeCondition(services.access, runModel.catalog, 'simulation_runs');
    const queued = await db.all<{ id: number | string }>(
      sql`SELECT id FROM simulation_runs WHERE project_id = ${projectId} AND status = 'queued' AND simulator_external_id = ${integration.simulatorExternalId as string}${scope ? sql` AND ${scope}` : Sql.raw('')}
        ORDER BY created_time, id LIMIT ${body.limit ?? 1}`,
    );
    const now = services.now();
    const taken: number[] = [];
    // A run another connector took meanwhile is no longer queued, and is not taken again.
    for (const { id } of queued) {
      const { changes } = await db.run(sql`UPDATE simulation_runs SET status = 'ready', simulator_integration_external_id = ${body.simulatorIntegrationExternalId},
        last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${id} AND status = 'queued'`);
      if (changes === 1) taken.push(Number(id));
    }
    return { items: await retrieveItems(runSpec, services, projectId, taken.map((id) => ({ id }))) };
  });
}

const NEXT: Readonly<Record<string, readonly string[]>> = { ready: ['ready', 'running', 'success', 'failure'], running: ['running', 'success', 'failure'] };

/** A connector's report of a run: its status, and the data it ran with and produced, within 100 KB per run. */
export function reportRuns(services: Services, projectId: number, reports: readonly RunReport[]) {
  return inWrite(services, async (services) => {
    const { db } = services;
    const runs = await visibleRuns(services, projectId, reports.map((r) => r.id));
    for (const [i, report] of reports.entries()) {
      const run = runs[i];
      const path: Path = ['items', i];
      const allowed = NEXT[run.status as string];
      if (!allowed) {
        const why = run.status === 'queued' ? 'no connector has taken it (POST /simulators/runs/claim)' : 'it has ended';
        throw badRequest(`${formatPath([...path, 'status'])}: the simulation run ${run.id} is ${run.status as string} and cannot be reported on: ${why}`);
      }
      if (!allowed.includes(report.status)) throw badRequest(`${formatPath([...path, 'status'])}: a ${run.status as string} simulation run cannot become ${report.status}`);
      const { id: _id, status: _status, simulationTime: _time, ...data } = report;
      const bytes = Buffer.byteLength(JSON.stringify(data));
      const stored = await db.get<{ n: number | string }>(sql`SELECT reported_bytes AS n FROM simulation_runs WHERE project_id = ${projectId} AND id = ${run.id}`);
      const total = Number(stored?.n ?? 0) + bytes;
      if (total > SIMULATOR_LIMITS.reportBytes) {
        throw new ApiError(
          413,
          `${formatPath(path)}: a connector reports at most ${SIMULATOR_LIMITS.reportBytes} bytes (100 KB) per simulation run; run ${run.id} would have ${total}`,
        );
      }
      await db.run(sql`UPDATE simulation_runs SET status = ${report.status},
        status_message = ${report.statusMessage ?? (run.statusMessage as string | undefined) ?? null},
        simulation_time = ${report.simulationTime ?? (run.simulationTime as number | undefined) ?? null},
        ${report.inputs ? sql`inputs = ${JSON.stringify(report.inputs)},` : Sql.raw('')}
        ${report.outputs ? sql`outputs = ${JSON.stringify(report.outputs)},` : Sql.raw('')}
        reported_bytes = ${total}, last_updated_time = ${services.now()}
        WHERE project_id = ${projectId} AND id = ${run.id}`);
    }
    return {};
  });
}
