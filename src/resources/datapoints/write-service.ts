/**
 * Inserting and deleting data points: each request is checked whole, then applied in one transaction, raw
 * points and rollups together, with the change log of the subscriptions that hold the series. Writing a
 * series' data points is a write of the series: it needs the series in the request's scope and, in a
 * write-protected data set, ownership of that data set.
 */
import { badRequest, duplicatedItems, missingItems } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { checkRef, type Ref } from '../../query/refs.js';
import { inWrite, requireWritableTargets } from '../crud.js';
import { ChunkStore } from './chunk-store.js';
import { packPoints, type StringLimit } from './insert-points.js';
import { DATAPOINT_LIMITS as L } from './limits.js';
import { refreshAfterDelete, refreshAfterWrite } from './rollup-maintenance.js';
import type { DeleteDatapointsBody, InsertDatapointsBody } from './schema.js';
import { findSeries, seriesLabel, type SeriesInfo } from './series-lookup.js';
import { recordDataChanges, type DataChange } from '../subscriptions/change-log.js';

/**
 * The series of the request, each of which it must be allowed to write, locked until the write ends: a write
 * reads, merges and rewrites a series' chunks and rollups, which no other write of the series may interleave.
 */
async function resolveWritable(services: Services, projectId: number, refs: Ref[]): Promise<SeriesInfo[]> {
  const series = await findSeries(services.db, projectId, refs, services.access, true);
  const missing = refs.filter((_, i) => series[i] === undefined);
  if (missing.length) throw missingItems(missing);
  const found = series as SeriesInfo[];
  await requireWritableTargets(services, projectId, 'time series', found.map((s, i) => ({ target: { id: s.id, dataSetId: s.dataSetId }, path: ['items', i] })));
  return found;
}

export async function insertDatapoints(services: Services, projectId: number, body: InsertDatapointsBody, stringLimit: StringLimit): Promise<void> {
  const refs = body.items.map((item, i) => checkRef(item, ['items', i], true));
  const total = body.items.reduce((sum, item) => sum + item.datapoints.length, 0);
  if (total > L.insertPoints) throw badRequest(`items: at most ${L.insertPoints} data points per request (across all items), got ${total}`);
  await inWrite(services, async (services) => {
    const { db } = services;
    const series = await resolveWritable(services, projectId, refs);
    const seen = new Map<number, number>();
    const duplicated: Ref[] = [];
    series.forEach((s, i) => {
      if (seen.has(s.id)) duplicated.push(refs[i]);
      seen.set(s.id, i);
    });
    if (duplicated.length) throw duplicatedItems(duplicated, 422);
    const blocks = body.items.map((item, i) => packPoints(item.datapoints, i, { isString: series[i].isString, label: seriesLabel(series[i]) }, stringLimit));
    const changes: DataChange[] = [];
    for (const [i, block] of blocks.entries()) {
      if (block.n === 0) continue;
      const s = series[i];
      const span = await new ChunkStore(db, projectId, s.id).write(block);
      if (!s.isString) await refreshAfterWrite(db, projectId, s.id, block.ts, span);
      changes.push({ kind: 'upsert', series: s, points: block });
    }
    await recordDataChanges(services, projectId, changes);
  });
}

export async function deleteDatapoints(services: Services, projectId: number, body: DeleteDatapointsBody): Promise<void> {
  const refs = body.items.map((item, i) => checkRef(item, ['items', i], true));
  const ranges = body.items.map((item, i) => {
    const end = item.exclusiveEnd ?? item.inclusiveBegin + 1;
    if (end <= item.inclusiveBegin) {
      throw badRequest(`items[${i}].exclusiveEnd: must be after inclusiveBegin (${item.inclusiveBegin}), got ${end}`);
    }
    return { begin: item.inclusiveBegin, end };
  });
  await inWrite(services, async (services) => {
    const { db } = services;
    const series = await resolveWritable(services, projectId, refs);
    const deleted = new Map<number, { series: SeriesInfo; ranges: Array<{ begin: number; end: number }> }>();
    for (const [i, s] of series.entries()) {
      const { begin, end } = ranges[i];
      const changed = await new ChunkStore(db, projectId, s.id).deleteRange(begin, end);
      if (changed && !s.isString) await refreshAfterDelete(db, projectId, s.id, begin, end);
      const entry = deleted.get(s.id) ?? { series: s, ranges: [] };
      entry.ranges.push(ranges[i]);
      deleted.set(s.id, entry);
    }
    await recordDataChanges(services, projectId, [...deleted.values()].map((d) => ({ kind: 'delete', ...d })));
  });
}

