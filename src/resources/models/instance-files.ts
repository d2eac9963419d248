/**
 * The files of nodes: a node with data in `cdf_cdm:CogniteFile` has a file bound to it (files/instances.ts).
 * After an instance write, the nodes whose data there, in `cdf_cdm:CogniteDescribable` or in
 * `cdf_cdm:CogniteSourceable` changed pass on what their file's managed fields now are (deleted nodes take
 * their files with them: instance-writes-store.ts).
 */
import { sql, Sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { syncManagedFiles, type ManagedFile } from '../files/instances.js';
import { fromColumn } from './container-tables.js';
import { containerKey } from './identifiers.js';
import type { ProjectSchema, StoredContainer } from './schema-store.js';

const FILE = { space: 'cdf_cdm', externalId: 'CogniteFile' };
const DESCRIBABLE = { space: 'cdf_cdm', externalId: 'CogniteDescribable' };
const SOURCEABLE = { space: 'cdf_cdm', externalId: 'CogniteSourceable' };

/** The containers whose data makes a file's managed fields. */
export const FILE_CONTAINERS: readonly string[] = [FILE, DESCRIBABLE, SOURCEABLE].map(containerKey);

interface WrittenNode {
  id: number;
  space: string;
  externalId: string;
}

/** Creates or updates the files of written nodes that have data in CogniteFile. */
export async function syncFilesOfNodes(db: Queryable, projectId: number, schema: ProjectSchema, nodes: readonly WrittenNode[], now: number): Promise<void> {
  const [f, d, s] = [FILE, DESCRIBABLE, SOURCEABLE].map((c) => schema.stored(c));
  if (!f || !d || !s || nodes.length === 0) return;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const column = (c: StoredContainer, alias: string, property: string): Sql => Sql.raw(`${alias}.${c.layout.columns[property]}`);
  const value = (c: StoredContainer, v: unknown, property: string) => fromColumn(v, c.definition.properties[property].type);
  const joined = (c: StoredContainer, alias: string) => Sql.raw(`LEFT JOIN ${c.layout.table} ${alias} ON ${alias}.project_id = f.project_id AND ${alias}.space = f.space AND ${alias}.instance_id = f.instance_id`);
  const out: ManagedFile[] = [];
  const ids = [...byId.keys()];
  for (let at = 0; at < ids.length; at += 500) {
    const rows = await db.all<Record<string, unknown>>(
      sql`SELECT f.instance_id, ${column(f, 'f', 'directory')} AS directory, ${column(f, 'f', 'mimeType')} AS mime_type, ${column(d, 'd', 'name')} AS name,
            ${column(s, 's', 'sourceCreatedTime')} AS source_created, ${column(s, 's', 'sourceUpdatedTime')} AS source_updated
          FROM ${Sql.raw(f.layout.table)} f ${joined(d, 'd')} ${joined(s, 's')}
          WHERE f.project_id = ${projectId} AND f.instance_id IN (${ids.slice(at, at + 500)})`,
    );
    for (const r of rows) {
      const node = byId.get(Number(r.instance_id))!;
      out.push({
        instanceId: { space: node.space, externalId: node.externalId },
        name: (value(d, r.name, 'name') as string | null) ?? node.externalId,
        directory: value(f, r.directory, 'directory') as string | null,
        mimeType: value(f, r.mime_type, 'mimeType') as string | null,
        sourceCreatedTime: value(s, r.source_created, 'sourceCreatedTime') as number | null,
        sourceModifiedTime: value(s, r.source_updated, 'sourceUpdatedTime') as number | null,
      });
    }
  }
  await syncManagedFiles(db, projectId, out, now);
}
