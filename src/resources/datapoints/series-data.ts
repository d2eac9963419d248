/**
 * What a time series' deletion takes with it: its points and rollups (called from the time series
 * resource's `beforeDelete` hook, in the same transaction).
 */
import type { Queryable } from '../../storage/store.js';
import { deleteSeriesChunks } from './chunk-store.js';
import { deleteSeriesRollups } from './rollup-store.js';

export async function deleteSeriesData(db: Queryable, projectId: number, seriesIds: readonly number[]): Promise<void> {
  await deleteSeriesChunks(db, projectId, seriesIds);
  await deleteSeriesRollups(db, projectId, seriesIds);
}
