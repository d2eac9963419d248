/**
 * What a request scoped to data sets reaches of workflows (`workflowOrchestrationAcl` with `datasetScope`):
 * the workflows in those data sets, and the versions, executions, tasks and triggers of those workflows.
 * Everything else answers as if it did not exist. Writes keep to the scope and to data set write
 * protection through the shared check of item writes (crud.ts).
 */
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { requireWritableTargets } from '../crud.js';

/** The data sets the request is limited to; undefined when it reaches every workflow. */
function scopedDataSets(services: Services): readonly number[] | undefined {
  const access = services.access;
  return access === undefined || access.all ? undefined : access.dataSetIds;
}

/** The condition on a row of `workflows` that the request reaches it. */
export function workflowRows(services: Services): Sql {
  const ids = scopedDataSets(services);
  return ids === undefined ? Sql.raw('TRUE') : sql`data_set_id IN (${ids})`;
}

/** The condition on a row with a `workflow_external_id` that the request reaches its workflow. */
export function underReachedWorkflow(services: Services, projectId: number): Sql {
  const ids = scopedDataSets(services);
  return ids === undefined ? Sql.raw('TRUE') : sql`workflow_external_id IN (SELECT external_id FROM workflows WHERE project_id = ${projectId} AND data_set_id IN (${ids}))`;
}

/**
 * Refuses (403) a write of workflows, or of what belongs to them, that touches a data set outside the
 * request's scope (or no data set, under a scope of data sets), or a write-protected data set the principal
 * does not own: each target is a workflow's data set before or after the write. `tx` is the write's
 * transaction, which the check reads in.
 */
export function requireWritableWorkflows(
  services: Services,
  tx: Queryable,
  projectId: number,
  targets: ReadonlyArray<{ dataSetId: number | null | undefined; path: Array<string | number> }>,
): Promise<void> {
  return requireWritableTargets(
    { ...services, db: tx },
    projectId,
    'workflow',
    targets.map((t) => ({ target: { dataSetId: t.dataSetId == null ? null : Number(t.dataSetId) }, path: t.path })),
  );
}
