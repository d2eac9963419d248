/**
 * Data set rules shared with other resources: which data sets are write-protected, and filters by data set.
 */
import type { Services } from '../../http/services.js';
import { inLeaf } from '../../query/basic.js';
import type { ResourceCatalog } from '../../query/catalog.js';
import type { FilterNode } from '../../query/filter.js';
import { resolveReferences } from '../../query/references.js';
import type { RefInput } from '../../query/refs.js';
import { visibleIn } from '../../query/visibility.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { dataSetCatalog } from './model.js';

/** The write-protected data sets among `ids`. */
export async function writeProtectedDataSets(db: Queryable, projectId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ id: number }>(sql`SELECT id FROM data_sets WHERE project_id = ${projectId} AND write_protected = 1 AND id IN (${ids})`);
  return new Set(rows.map((r) => r.id));
}

/** The basic filter's `dataSetIds`, resolved among the data sets the request sees, as a filter on `catalog`'s `dataSetId`. */
export async function dataSetIdsNode(services: Services, projectId: number, catalog: ResourceCatalog, refs: readonly RefInput[] | undefined): Promise<FilterNode | undefined> {
  if (!refs) return undefined;
  return inLeaf(catalog, 'dataSetId', await resolveReferences(services.db, visibleIn(services, dataSetCatalog), projectId, refs, ['filter', 'dataSetIds']));
}
