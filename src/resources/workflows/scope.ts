/**
 * What a request scoped to data sets reaches of workflows (`workflowOrchestrationAcl` with `datasetScope`):
 * the workflows in those data sets, and the versions, executions, tasks and triggers of those workflows.
 * Everything else answers as if it did not exist. A request scoped that way writes only workflows in its
 * data sets.
 */
import { forbidden } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';

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

/** Refuses a write that would put a workflow outside the request's data sets (or leave it without one). */
export function requireWritableDataSet(services: Services, dataSetId: number | null | undefined, path: string): void {
  const ids = scopedDataSets(services);
  if (ids === undefined || (dataSetId != null && ids.includes(dataSetId))) return;
  throw forbidden(`${path}: workflowOrchestrationAcl is scoped to the data sets ${JSON.stringify(ids)} for this request; a workflow written by it must be in one of them`);
}
