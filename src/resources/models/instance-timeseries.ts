/**
 * The time series of nodes: a node with data in `cdf_cdm:CogniteTimeSeries` has a time series bound to it
 * (timeseries/instances.ts). After an instance write, the nodes whose data there or in
 * `cdf_cdm:CogniteDescribable` changed pass on what their series' managed fields now are (deleted nodes take
 * their series with them: instance-writes-store.ts).
 */
import { sql, Sql } from '../../storage/sql.js';
import type { ChangeFeed } from '../../storage/changes.js';
import type { Queryable } from '../../storage/store.js';
import { syncManagedSeries, type ManagedSeries } from '../timeseries/instances.js';
import { fromColumn } from './container-tables.js';
import { containerKey, type DirectRelationReference } from './identifiers.js';
import type { ProjectSchema, StoredContainer } from './schema-store.js';

const TIME_SERIES = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries' };
const DESCRIBABLE = { space: 'cdf_cdm', externalId: 'CogniteDescribable' };

/** The containers whose data makes a series' managed fields. */
export const SERIES_CONTAINERS: readonly string[] = [containerKey(TIME_SERIES), containerKey(DESCRIBABLE)];

interface WrittenNode {
  id: number;
  space: string;
  externalId: string;
}

const column = (c: StoredContainer, alias: string, property: string): Sql => Sql.raw(`${alias}.${c.layout.columns[property]}`);

/** Creates or updates the series of written nodes that have data in CogniteTimeSeries (`changes` wakes the waiters of their subscriptions). */
export async function syncSeriesOfNodes(db: Queryable, projectId: number, schema: ProjectSchema, nodes: readonly WrittenNode[], now: number, changes?: ChangeFeed): Promise<void> {
  const ts = schema.stored(TIME_SERIES);
  const d = schema.stored(DESCRIBABLE);
  if (!ts || !d || nodes.length === 0) return;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const p = (c: StoredContainer, property: string) => c.definition.properties[property].type;
  const out: ManagedSeries[] = [];
  const ids = [...byId.keys()];
  for (let at = 0; at < ids.length; at += 500) {
    const rows = await db.all<Record<string, unknown>>(
      sql`SELECT t.instance_id, ${column(ts, 't', 'type')} AS type, ${column(ts, 't', 'isStep')} AS is_step, ${column(ts, 't', 'sourceUnit')} AS source_unit, ${column(ts, 't', 'unit')} AS unit, ${column(d, 'd', 'name')} AS name, ${column(d, 'd', 'description')} AS description
          FROM ${Sql.raw(ts.layout.table)} t LEFT JOIN ${Sql.raw(d.layout.table)} d ON d.project_id = t.project_id AND d.space = t.space AND d.instance_id = t.instance_id
          WHERE t.project_id = ${projectId} AND t.instance_id IN (${ids.slice(at, at + 500)})`,
    );
    for (const r of rows) {
      const node = byId.get(Number(r.instance_id))!;
      const unit = fromColumn(r.unit, p(ts, 'unit')) as DirectRelationReference | null;
      out.push({
        instanceId: { space: node.space, externalId: node.externalId },
        name: fromColumn(r.name, p(d, 'name')) as string | null,
        description: fromColumn(r.description, p(d, 'description')) as string | null,
        isStep: fromColumn(r.is_step, p(ts, 'isStep')) === true,
        isString: fromColumn(r.type, p(ts, 'type')) === 'string',
        unit: fromColumn(r.source_unit, p(ts, 'sourceUnit')) as string | null,
        unitExternalId: unit?.externalId ?? null,
      });
    }
  }
  await syncManagedSeries(db, projectId, out, now, changes);
}
