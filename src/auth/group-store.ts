/**
 * Groups in SQL. A group belongs to one project and grants its capabilities to the principals that are its
 * members: by the identity provider's group id (`sourceId`, matched against the token's access claims) or
 * by an explicit list of subjects (`members`).
 */
import { allocateIds } from '../storage/ids.js';
import type { Queryable } from '../storage/store.js';
import { sql } from '../storage/sql.js';
import type { CapabilityObject } from './capabilities.js';

export const ALL_USER_ACCOUNTS = 'allUserAccounts';

export interface GroupAttributes {
  token?: { appIds?: string[] };
}

export interface GroupRecord {
  id: number;
  name: string;
  sourceId?: string;
  members?: string[] | typeof ALL_USER_ACCOUNTS;
  capabilities: CapabilityObject[];
  metadata?: Record<string, string>;
  attributes?: GroupAttributes;
  createdTime: number;
}

export type NewGroup = Omit<GroupRecord, 'id' | 'createdTime'>;

interface GroupRow {
  id: number;
  name: string;
  source_id: string | null;
  members: string | null;
  capabilities: string;
  metadata: string | null;
  attributes: string | null;
  created_time: number;
}

function toRecord(r: GroupRow): GroupRecord {
  return {
    id: r.id,
    name: r.name,
    ...(r.source_id !== null ? { sourceId: r.source_id } : {}),
    ...(r.members !== null ? { members: JSON.parse(r.members) as GroupRecord['members'] } : {}),
    capabilities: JSON.parse(r.capabilities) as CapabilityObject[],
    ...(r.metadata !== null ? { metadata: JSON.parse(r.metadata) as Record<string, string> } : {}),
    ...(r.attributes !== null ? { attributes: JSON.parse(r.attributes) as GroupAttributes } : {}),
    createdTime: r.created_time,
  };
}

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

export async function insertGroup(db: Queryable, projectId: number, g: NewGroup, now: number): Promise<number> {
  const [id] = await allocateIds(db, 'access_groups', 1);
  await db.run(sql`INSERT INTO access_groups (id, project_id, name, source_id, members, capabilities, metadata, attributes, created_time)
        VALUES (${id}, ${projectId}, ${g.name}, ${g.sourceId ?? null}, ${json(g.members)}, ${JSON.stringify(g.capabilities)}, ${json(g.metadata)}, ${json(g.attributes)}, ${now})`);
  return id;
}

export async function projectGroups(db: Queryable, projectId: number): Promise<GroupRecord[]> {
  return (await db.all<GroupRow>(sql`SELECT * FROM access_groups WHERE project_id = ${projectId} ORDER BY id`)).map(toRecord);
}

export async function existingGroupIds(db: Queryable, projectId: number, ids: readonly number[]): Promise<Set<number>> {
  return new Set((await db.all<{ id: number }>(sql`SELECT id FROM access_groups WHERE project_id = ${projectId} AND id IN (${ids})`)).map((r) => r.id));
}

export async function deleteGroups(db: Queryable, projectId: number, ids: readonly number[]): Promise<void> {
  await db.run(sql`DELETE FROM access_groups WHERE project_id = ${projectId} AND id IN (${ids})`);
}
