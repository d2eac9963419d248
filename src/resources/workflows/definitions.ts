/**
 * Workflows and their versions: created or updated in one request (an upsert), listed, read and deleted. A
 * version's task graph is checked (graph.ts) and stored with the defaults filled in, so an execution runs
 * what the version answers. Upserting a version of a workflow that does not exist creates the workflow.
 */
import { createHash } from 'node:crypto';
import { ApiError, badRequest, missingItems, notFound, type IdentifierRef } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { requireExistingIn } from '../../query/references.js';
import { visibleIn } from '../../query/visibility.js';
import { dataSetCatalog } from '../datasets/model.js';
import { graphProblem } from './graph.js';
import { pageOf, type Page } from './paging.js';
import type { TaskDefinition, VersionUpsert, WorkflowFilter, WorkflowUpsert } from './schema.js';
import { requireWritableWorkflows, underReachedWorkflow, workflowRows } from './scope.js';

export interface StoredDefinition {
  hash: string;
  description?: string;
  tasks: TaskDefinition[];
}

interface WorkflowRow {
  external_id: string;
  description: string | null;
  data_set_id: number | null;
  max_concurrent_executions: number | null;
  created_time: number;
  last_updated_time: number;
}

interface VersionRow {
  workflow_external_id: string;
  version: string;
  definition: string;
  created_time: number;
  last_updated_time: number;
}

function workflowJson(r: WorkflowRow) {
  return {
    externalId: r.external_id,
    ...(r.description !== null ? { description: r.description } : {}),
    ...(r.data_set_id !== null ? { dataSetId: Number(r.data_set_id) } : {}),
    maxConcurrentExecutions: r.max_concurrent_executions === null ? null : Number(r.max_concurrent_executions),
    createdTime: Number(r.created_time),
    lastUpdatedTime: Number(r.last_updated_time),
  };
}

function versionJson(r: VersionRow) {
  return {
    workflowExternalId: r.workflow_external_id,
    version: r.version,
    workflowDefinition: JSON.parse(r.definition) as StoredDefinition,
    createdTime: Number(r.created_time),
    lastUpdatedTime: Number(r.last_updated_time),
  };
}

/** A task as stored and answered: the reference's defaults filled in. */
export function withDefaults(task: TaskDefinition): TaskDefinition {
  return { ...task, retries: task.retries ?? 3, timeout: task.timeout ?? 3600, onFailure: task.onFailure ?? 'abortWorkflow', dependsOn: task.dependsOn ?? [] };
}

async function putWorkflow(db: Queryable, projectId: number, item: WorkflowUpsert, now: number): Promise<void> {
  await db.run(sql`INSERT INTO workflows (project_id, external_id, description, data_set_id, max_concurrent_executions, created_time, last_updated_time)
    VALUES (${projectId}, ${item.externalId}, ${item.description ?? null}, ${item.dataSetId ?? null}, ${item.maxConcurrentExecutions ?? null}, ${now}, ${now})
    ON CONFLICT (project_id, external_id) DO UPDATE SET description = excluded.description, data_set_id = excluded.data_set_id,
      max_concurrent_executions = excluded.max_concurrent_executions, last_updated_time = excluded.last_updated_time`);
}

export async function findWorkflow(db: Queryable, projectId: number, externalId: string): Promise<WorkflowRow | undefined> {
  return db.get<WorkflowRow>(sql`SELECT * FROM workflows WHERE project_id = ${projectId} AND external_id = ${externalId}`);
}

export async function upsertWorkflows(services: Services, projectId: number, items: readonly WorkflowUpsert[]) {
  return services.db.transaction(async (db) => {
    const now = services.now();
    await requireExistingIn(db, visibleIn(services, dataSetCatalog), projectId, items.map((item) => ({ dataSetId: item.dataSetId ?? null })), 'dataSetId');
    for (const [i, item] of items.entries()) {
      const before = await findWorkflow(db, projectId, item.externalId);
      const path = ['items', i, 'dataSetId'];
      await requireWritableWorkflows(services, db, projectId, [{ dataSetId: item.dataSetId, path }, ...(before ? [{ dataSetId: before.data_set_id, path }] : [])]);
      await putWorkflow(db, projectId, item, now);
    }
    return { items: await Promise.all(items.map(async (item) => workflowJson((await findWorkflow(db, projectId, item.externalId))!))) };
  });
}

export async function listWorkflows(services: Services, projectId: number, query: { limit?: number; cursor?: string }): Promise<Page<unknown>> {
  const after = query.cursor ? (services.cursors.decode(query.cursor, 'workflows') as string) : undefined;
  const rows = await services.db.all<WorkflowRow>(sql`SELECT * FROM workflows WHERE project_id = ${projectId} AND ${workflowRows(services)}
    ${after === undefined ? Sql.raw('') : sql`AND external_id > ${after}`} ORDER BY external_id LIMIT ${(query.limit ?? 100) + 1}`);
  return pageOf(services, rows, query.limit ?? 100, 'workflows', (r) => r.external_id, workflowJson);
}

/** The workflow, if the request reaches it. */
async function reachedWorkflow(services: Services, db: Queryable, projectId: number, externalId: string): Promise<WorkflowRow | undefined> {
  return db.get<WorkflowRow>(sql`SELECT * FROM workflows WHERE project_id = ${projectId} AND external_id = ${externalId} AND ${workflowRows(services)}`);
}

export async function getWorkflow(services: Services, projectId: number, externalId: string) {
  const row = await reachedWorkflow(services, services.db, projectId, externalId);
  if (!row) throw notFound(`There is no workflow "${externalId}"`);
  return workflowJson(row);
}

export async function deleteWorkflows(services: Services, projectId: number, refs: ReadonlyArray<{ externalId: string }>, ignoreUnknownIds: boolean) {
  await services.db.transaction(async (db) => {
    const missing = [];
    for (const ref of refs) if (!(await reachedWorkflow(services, db, projectId, ref.externalId))) missing.push(ref);
    if (missing.length && !ignoreUnknownIds) throw notFoundMissing(missing);
    for (const [i, ref] of refs.entries()) {
      const workflow = await reachedWorkflow(services, db, projectId, ref.externalId);
      if (!workflow) continue;
      await requireWritableWorkflows(services, db, projectId, [{ dataSetId: workflow.data_set_id, path: ['items', i] }]);
      await db.run(sql`DELETE FROM workflow_versions WHERE project_id = ${projectId} AND workflow_external_id = ${ref.externalId}`);
      await db.run(sql`DELETE FROM workflows WHERE project_id = ${projectId} AND external_id = ${ref.externalId}`);
    }
  });
  return {};
}

/** The reference's answer for unknown ids when they are not ignored: 404 with `missing`. */
function notFoundMissing(missing: IdentifierRef[]) {
  return new ApiError(404, missingItems(missing).message, { missing });
}

export async function findVersion(db: Queryable, projectId: number, workflowExternalId: string, version: string): Promise<VersionRow | undefined> {
  return db.get<VersionRow>(sql`SELECT * FROM workflow_versions WHERE project_id = ${projectId} AND workflow_external_id = ${workflowExternalId} AND version = ${version}`);
}

/** The version, if the request reaches its workflow. */
export async function reachedVersion(services: Services, db: Queryable, projectId: number, workflowExternalId: string, version: string): Promise<VersionRow | undefined> {
  return db.get<VersionRow>(sql`SELECT * FROM workflow_versions WHERE project_id = ${projectId} AND workflow_external_id = ${workflowExternalId} AND version = ${version}
    AND ${underReachedWorkflow(services, projectId)}`);
}

export async function upsertVersions(services: Services, projectId: number, items: readonly VersionUpsert[]) {
  for (const [i, item] of items.entries()) {
    const problem = graphProblem(item.workflowDefinition.tasks, false);
    if (problem) throw badRequest(`items[${i}].workflowDefinition.${problem}`);
  }
  return services.db.transaction(async (db) => {
    const now = services.now();
    for (const [i, item] of items.entries()) {
      const workflow = await findWorkflow(db, projectId, item.workflowExternalId);
      await requireWritableWorkflows(services, db, projectId, [{ dataSetId: workflow?.data_set_id, path: ['items', i, 'workflowExternalId'] }]);
      if (!workflow) await putWorkflow(db, projectId, { externalId: item.workflowExternalId }, now);
      const tasks = item.workflowDefinition.tasks.map(withDefaults);
      const hash = createHash('sha256').update(JSON.stringify(tasks)).digest('hex').slice(0, 32).toUpperCase();
      const definition: StoredDefinition = { hash, ...(item.workflowDefinition.description !== undefined ? { description: item.workflowDefinition.description } : {}), tasks };
      await db.run(sql`INSERT INTO workflow_versions (project_id, workflow_external_id, version, definition, created_time, last_updated_time)
        VALUES (${projectId}, ${item.workflowExternalId}, ${item.version}, ${JSON.stringify(definition)}, ${now}, ${now})
        ON CONFLICT (project_id, workflow_external_id, version) DO UPDATE SET definition = excluded.definition, last_updated_time = excluded.last_updated_time`);
    }
    return { items: await Promise.all(items.map(async (item) => versionJson((await findVersion(db, projectId, item.workflowExternalId, item.version))!))) };
  });
}

export async function listVersions(services: Services, projectId: number, body: { filter?: { workflowFilters?: WorkflowFilter[] }; limit?: number; cursor?: string }) {
  const limit = body.limit ?? 100;
  const identity = { versions: body.filter ?? null };
  const after = body.cursor ? (services.cursors.decode(body.cursor, identity) as [number, string, string]) : undefined;
  const rows = await services.db.all<VersionRow>(sql`SELECT * FROM workflow_versions WHERE project_id = ${projectId}
    AND ${underReachedWorkflow(services, projectId)} AND ${workflowFilterSql(body.filter?.workflowFilters, 'version')}
    AND ${after ? sql`(created_time > ${after[0]} OR (created_time = ${after[0]} AND (workflow_external_id > ${after[1]} OR (workflow_external_id = ${after[1]} AND version > ${after[2]}))))` : Sql.raw('TRUE')}
    ORDER BY created_time, workflow_external_id, version LIMIT ${limit + 1}`);
  return pageOf(services, rows, limit, identity, (r) => [Number(r.created_time), r.workflow_external_id, r.version], versionJson);
}

/** Rows of the workflows (and versions) the filters name; all when there are none. */
export function workflowFilterSql(filters: readonly WorkflowFilter[] | undefined, versionColumn: string): Sql {
  if (!filters?.length) return Sql.raw('TRUE');
  return Sql.or(
    filters.map((f) => (f.version === undefined ? sql`workflow_external_id = ${f.externalId}` : sql`(workflow_external_id = ${f.externalId} AND ${Sql.raw(versionColumn)} = ${f.version})`)),
  );
}

export async function getVersion(services: Services, projectId: number, workflowExternalId: string, version: string) {
  const row = await reachedVersion(services, services.db, projectId, workflowExternalId, version);
  if (!row) throw notFound(`There is no version "${version}" of the workflow "${workflowExternalId}"`);
  return versionJson(row);
}

export async function deleteVersions(services: Services, projectId: number, refs: ReadonlyArray<{ workflowExternalId: string; version: string }>, ignoreUnknownIds: boolean) {
  await services.db.transaction(async (db) => {
    const missing: Array<{ workflowExternalId: string; version: string }> = [];
    const reached: typeof missing = [];
    for (const ref of refs) ((await reachedVersion(services, db, projectId, ref.workflowExternalId, ref.version)) ? reached : missing).push(ref);
    if (missing.length && !ignoreUnknownIds) throw notFoundMissing(missing);
    const workflows = await Promise.all(reached.map((ref) => findWorkflow(db, projectId, ref.workflowExternalId)));
    await requireWritableWorkflows(services, db, projectId, workflows.map((w, i) => ({ dataSetId: w?.data_set_id, path: ['items', refs.indexOf(reached[i])] })));
    for (const ref of reached)
      await db.run(sql`DELETE FROM workflow_versions WHERE project_id = ${projectId} AND workflow_external_id = ${ref.workflowExternalId} AND version = ${ref.version}`);
  });
  return {};
}
