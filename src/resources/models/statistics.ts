/**
 * Usage of the data modeling service: the project's counts with their limits, and each space's counts.
 * Views and data models count every version; soft-deleted instances are the tombstones kept of deleted ones.
 * The global layer (the core data model) and the nodes kept in every project's system spaces (system-nodes.ts)
 * are the system's and count against no project.
 */
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';
import { inUserSpace } from './global-instances.js';
import { projectLimits } from './limits.js';
import { readSchema } from './schema-store.js';
import { spaceCondition } from './space-access.js';
import { modelsSettings } from './settings.js';

export async function projectStatistics(services: Services, projectId: number) {
  // A principal scoped to some spaces counts only what is in them.
  const scope = spaceCondition(services.access, 'space');
  const inScope = scope ? sql` AND ${scope}` : Sql.raw('');
  const count = (table: string, extra: Sql = Sql.raw('')) => sql`(SELECT count(*) FROM ${Sql.raw(table)} WHERE project_id = ${projectId}${extra}${inScope})`;
  const instances = (where: string) => count('dm_instances', sql` AND ${Sql.raw(where)} AND ${inUserSpace('space')}`);
  const counts = (await services.reads.all<Record<string, number>>(sql`SELECT
    ${count('dm_spaces')} AS spaces,
    ${count('dm_containers')} AS containers,
    ${count('dm_views')} AS views,
    ${count('dm_data_models')} AS "dataModels",
    ${instances('kind = 0 AND deleted_time IS NULL')} AS nodes,
    ${instances('kind = 1 AND deleted_time IS NULL')} AS edges,
    ${instances('kind = 0 AND deleted_time IS NOT NULL')} AS "softDeletedNodes",
    ${instances('kind = 1 AND deleted_time IS NOT NULL')} AS "softDeletedEdges"`))[0];
  const n = (k: string) => Number(counts[k]);
  const schema = await readSchema(services.reads, projectId);
  const properties = [...schema.containers.values()]
    .filter((c) => !c.isGlobal && (!services.access || services.access.all || services.access.spaces.includes(c.definition.space)))
    .reduce((sum, c) => sum + Object.keys(c.definition.properties).length, 0);
  const L = projectLimits(modelsSettings(services).limits);
  return {
    spaces: { count: n('spaces'), limit: L.spaces },
    containers: { count: n('containers'), limit: L.containers },
    views: { count: n('views'), limit: L.views },
    dataModels: { count: n('dataModels'), limit: L.dataModels },
    containerProperties: { count: properties, limit: L.containerProperties },
    instances: {
      edges: n('edges'),
      softDeletedEdges: n('softDeletedEdges'),
      nodes: n('nodes'),
      softDeletedNodes: n('softDeletedNodes'),
      instances: n('nodes') + n('edges'),
      instancesLimit: L.instances,
      softDeletedInstances: n('softDeletedNodes') + n('softDeletedEdges'),
      softDeletedInstancesLimit: L.softDeletedInstances,
    },
    concurrentReadLimit: L.concurrentRead,
    concurrentWriteLimit: L.concurrentWrite,
    concurrentDeleteLimit: L.concurrentDelete,
  };
}

/** Per-space counts of the spaces given (all spaces in scope when none are). */
export async function spaceStatistics(services: Services, projectId: number, spaces?: readonly string[]) {
  const conditions = [sql`s.project_id = ${projectId}`];
  if (spaces) conditions.push(sql`s.space IN (${[...new Set(spaces)]})`);
  const scope = spaceCondition(services.access, 's.space');
  if (scope) conditions.push(scope);
  const count = (table: string, extra = '') =>
    Sql.raw(`(SELECT count(*) FROM ${table} x WHERE x.project_id = s.project_id AND x.space = s.space${extra})`);
  const rows = await services.reads.all<Record<string, unknown>>(sql`SELECT s.space,
    ${count('dm_containers')} AS containers, ${count('dm_views')} AS views, ${count('dm_data_models')} AS "dataModels",
    ${count('dm_instances', ' AND x.kind = 0 AND x.deleted_time IS NULL')} AS nodes,
    ${count('dm_instances', ' AND x.kind = 1 AND x.deleted_time IS NULL')} AS edges,
    ${count('dm_instances', ' AND x.kind = 0 AND x.deleted_time IS NOT NULL')} AS "softDeletedNodes",
    ${count('dm_instances', ' AND x.kind = 1 AND x.deleted_time IS NOT NULL')} AS "softDeletedEdges"
    FROM dm_spaces s WHERE ${Sql.and(conditions)} ORDER BY s.id`);
  const bySpace = new Map(
    rows.map((r) => [
      r.space as string,
      {
        space: r.space as string,
        containers: Number(r.containers),
        views: Number(r.views),
        dataModels: Number(r.dataModels),
        nodes: Number(r.nodes),
        edges: Number(r.edges),
        softDeletedNodes: Number(r.softDeletedNodes),
        softDeletedEdges: Number(r.softDeletedEdges),
      },
    ]),
  );
  const order = spaces ? [...new Set(spaces)] : [...bySpace.keys()];
  return { items: order.flatMap((s) => (bySpace.has(s) ? [bySpace.get(s)!] : [])) };
}
