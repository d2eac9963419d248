/**
 * The time series that data point requests name: references resolved to ids (shared `refs.ts`), and the
 * series fields that data point responses repeat.
 */
import { scopeCondition, type Access } from '../../auth/access.js';
import { lookupRefs, resolvedId, type InstanceId, type Ref } from '../../query/refs.js';
import { Sql, sql, TRUE } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { timeSeriesCatalog } from '../timeseries/model.js';

export interface SeriesInfo {
  id: number;
  externalId: string | null;
  instanceId: InstanceId | null;
  isString: boolean;
  isStep: boolean;
  unit: string | null;
  unitExternalId: string | null;
  dataSetId: number | null;
  /** The series' security categories as its row keeps them (JSON text of ids), which subscriptions' changes keep too. */
  securityCategories: string | null;
}

interface Row {
  id: number;
  external_id: string | null;
  instance_space: string | null;
  instance_external_id: string | null;
  is_string: number;
  is_step: number;
  unit: string | null;
  unit_external_id: string | null;
  data_set_id: number | null;
  security_categories: string | null;
}

/**
 * The series each reference names, in order (undefined for unknown ones). A series outside the request's
 * scope (`access`) is unknown too, so a scoped principal learns nothing about series it may not use. With
 * `lock`, in a transaction, their rows stay locked until it ends (taken in id order, so that two writes
 * naming the same series wait for each other instead of deadlocking).
 */
export async function findSeries(db: Queryable, projectId: number, refs: readonly Ref[], access?: Access, lock = false): Promise<Array<SeriesInfo | undefined>> {
  const found = await lookupRefs(db, 'timeseries', projectId, refs);
  const ids = refs.map((r) => resolvedId(r, found));
  const wanted = [...new Set(ids.filter((id): id is number => id !== undefined))].sort((x, y) => x - y);
  const locking = Sql.raw(lock ? db.dialect.forUpdate : '');
  const byId = new Map<number, SeriesInfo>();
  const scope = scopeCondition(access, timeSeriesCatalog) ?? TRUE;
  for (let i = 0; i < wanted.length; i += 500) {
    const part = wanted.slice(i, i + 500);
    const rows = await db.all<Row>(
      sql`SELECT t.id, t.external_id, t.instance_space, t.instance_external_id, t.is_string, t.is_step, t.unit, t.unit_external_id, t.data_set_id, t.security_categories
          FROM timeseries t WHERE t.project_id = ${projectId} AND t.id IN (${part}) AND ${scope} ORDER BY t.id${locking}`,
    );
    for (const r of rows) {
      byId.set(r.id, {
        id: r.id,
        externalId: r.external_id,
        instanceId: r.instance_space === null ? null : { space: r.instance_space, externalId: r.instance_external_id! },
        isString: r.is_string === 1,
        isStep: r.is_step === 1,
        unit: r.unit,
        unitExternalId: r.unit_external_id,
        dataSetId: r.data_set_id,
        securityCategories: r.security_categories,
      });
    }
  }
  return ids.map((id) => (id === undefined ? undefined : byId.get(id)));
}

/** How messages name a series. */
export function seriesLabel(s: SeriesInfo): string {
  if (s.externalId !== null) return `time series ${JSON.stringify(s.externalId)}`;
  return `time series ${s.id}`;
}

/** The fields every data point response item starts with. */
export function seriesHeader(s: SeriesInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { id: s.id };
  if (s.externalId !== null) out.externalId = s.externalId;
  if (s.instanceId !== null) out.instanceId = s.instanceId;
  out.isString = s.isString;
  out.isStep = s.isStep;
  out.type = s.isString ? 'string' : 'numeric';
  if (s.unit !== null) out.unit = s.unit;
  if (s.unitExternalId !== null) out.unitExternalId = s.unitExternalId;
  return out;
}
