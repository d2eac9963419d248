/**
 * What a time series' deletion takes with it: its points and rollups (called from the time series
 * resource's `beforeDelete` hook, in the same transaction).
 */
import type { Db } from '../../storage/db.js';
import { deleteSeriesChunks } from './chunk-store.js';
import { deleteSeriesRollups } from './rollup-store.js';

export function deleteSeriesData(db: Db, projectId: number, seriesIds: readonly number[]): void {
  deleteSeriesChunks(db, projectId, seriesIds);
  deleteSeriesRollups(db, projectId, seriesIds);
}
