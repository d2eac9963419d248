/**
 * The nodes the service keeps in every project, in its system spaces, which users read but no request writes
 * or deletes (spaces starting with `cdf_` are the system's, identifiers.ts):
 * - the unit nodes of `cdf_cdm_units`: one node per unit of the units catalog (`GET /units`), named by the
 *   unit's externalId (`temperature:deg_c`), with data in `cdf_cdm:CogniteUnit` and `cdf_cdm:CogniteDescribable`,
 *   which `CogniteTimeSeries.unit` and other direct relations point at;
 * - the type nodes of the core model's edges: `cdf_cdm:image-360-annotation`, the type of the
 *   `Cognite3DObject.images360` edges that 3D contextualization writes.
 *
 * Kept in each project rather than once in the global layer: a project's instances are one range of
 * `dm_instances` (project first in every index), which every read (by ids, lists with keyset cursors,
 * search, aggregates, query, sync's change feed, nested filters, the checks of direct relation targets)
 * addresses with `project_id = ?`. Reading project 0's nodes as well would turn that into
 * `project_id IN (?, 0)` in each of those places, which no index serves in id order, and would put another
 * project's positions in the change feed. A copy costs about 1,200 rows per project (the nodes and their
 * containers' rows), written once through the same apply path as a request's. They count against no
 * project's limits or statistics.
 *
 * Seeded at a project's first data modeling request in each process (as the global layer is), in one
 * transaction under a per-project lock, so processes starting together seed once; the digest of what was
 * seeded is kept in `dm_seeds`, so projects seeded from other nodes are seeded again at their next request
 * (applying the same nodes changes nothing; a changed unit gets a new version).
 */
import { createHash } from 'node:crypto';
import type { Services } from '../../http/services.js';
import { holdLock } from '../../storage/locks.js';
import { inProcessReader } from '../../storage/read-pool.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { unitCatalog } from '../units/catalog.js';
import type { Unit } from '../units/schema.js';
import { DM_LIMITS } from './limits.js';
import { UNITS_SPACE } from './identifiers.js';
import type { InstanceWriteItem } from './instance-schema.js';
import { applySystemInstances } from './instance-writes-store.js';

const SEED = 'system-nodes';
const UNIT_VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteUnit', version: 'v1' } as const;

/** The node of a unit: its names as CogniteDescribable has them, the rest as CogniteUnit does. */
export function unitNode(u: Unit): InstanceWriteItem {
  const properties: Record<string, unknown> = { name: u.name, description: u.longName, aliases: u.aliasNames, symbol: u.symbol, quantity: u.quantity };
  if (u.source !== undefined && u.source !== null) properties.source = u.source;
  if (u.sourceReference !== undefined && u.sourceReference !== null) properties.sourceReference = u.sourceReference;
  return { instanceType: 'node', space: UNITS_SPACE, externalId: u.externalId, sources: [{ source: UNIT_VIEW, properties }] };
}

/** The type nodes of the core model's edges. */
const EDGE_TYPE_NODES: InstanceWriteItem[] = [{ instanceType: 'node', space: 'cdf_cdm', externalId: 'image-360-annotation' }];

let nodes: InstanceWriteItem[] | undefined;
let digest: string | undefined;
const systemNodes = () => (nodes ??= [...unitCatalog.units.map(unitNode), ...EDGE_TYPE_NODES]);
const catalogDigest = () => (digest ??= createHash('sha256').update(JSON.stringify(systemNodes())).digest('base64url'));

const seeded = async (db: Pick<Queryable, 'get'>, projectId: number) =>
  (await db.get<{ digest: string }>(sql`SELECT digest FROM dm_seeds WHERE project_id = ${projectId} AND name = ${SEED}`))?.digest === catalogDigest();

/** Writes the system nodes into the project, in `db`'s transaction; `replace`, so each holds the system's values only. */
export async function seedSystemNodes(db: Queryable, services: Pick<Services, 'cursors' | 'now' | 'settings'>, projectId: number): Promise<void> {
  const system: Services = { db, reads: inProcessReader(db), cursors: services.cursors, now: services.now, settings: services.settings };
  const items = systemNodes();
  for (let at = 0; at < items.length; at += DM_LIMITS.instanceItems) {
    await applySystemInstances(db, system, projectId, { items: items.slice(at, at + DM_LIMITS.instanceItems), replace: true, autoCreateDirectRelations: false });
  }
  await db.run(sql`INSERT INTO dm_seeds (project_id, name, digest) VALUES (${projectId}, ${SEED}, ${catalogDigest()}) ON CONFLICT (project_id, name) DO UPDATE SET digest = excluded.digest`);
}

/** Projects whose system nodes this process has made sure of (or is making sure of), per store. */
const ready = new WeakMap<Queryable, Map<number, Promise<void>>>();

/** Resolves once the project holds this build's system nodes (one check per project and process). */
export function ensureSystemNodes(services: Services, projectId: number): Promise<void> {
  const store = services.db;
  let projects = ready.get(store);
  if (!projects) ready.set(store, (projects = new Map()));
  let done = projects.get(projectId);
  if (done === undefined) {
    done = (async () => {
      if (await seeded(store, projectId)) return;
      await store.transaction(async (db) => {
        await holdLock(db, 'systemNodes', projectId);
        if (await seeded(db, projectId)) return;
        await seedSystemNodes(db, services, projectId);
      });
    })();
    projects.set(projectId, done);
    done.catch(() => projects.delete(projectId));
  }
  return done;
}
