/**
 * The unit nodes of `cdf_cdm_units`: one node per unit of the units catalog (`GET /units`), named by the
 * unit's externalId (`temperature:deg_c`), with data in `cdf_cdm:CogniteUnit` and `cdf_cdm:CogniteDescribable`,
 * which `CogniteTimeSeries.unit` and other direct relations point at. Every project reads them like its own
 * nodes; no request writes or deletes them (spaces starting with `cdf_` are the system's, identifiers.ts).
 *
 * Kept in each project rather than once in the global layer: a project's instances are one range of
 * `dm_instances` (project first in every index), which every read (by ids, lists with keyset cursors,
 * search, aggregates, query, sync's change feed, nested filters, the checks of direct relation targets)
 * addresses with `project_id = ?`. Reading project 0's units as well would turn that into
 * `project_id IN (?, 0)` in each of those places, which no index serves in id order, and would put another
 * project's positions in the change feed. A copy costs about 1,200 rows per project (the node and its two
 * containers' rows), written once through the same apply path as a request's.
 *
 * Seeded at a project's first data modeling request in each process (as the global layer is), in one
 * transaction under a per-project lock, so processes starting together seed once; the seeded catalog's digest
 * is kept in `dm_seeds`, so projects created before this existed, or seeded from another catalog, are seeded
 * again at their next request (applying the same nodes changes nothing; a changed unit gets a new version).
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

const SEED = 'unit-nodes';
const UNIT_VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteUnit', version: 'v1' } as const;

/** The node of a unit: its names as CogniteDescribable has them, the rest as CogniteUnit does. */
export function unitNode(u: Unit): InstanceWriteItem {
  const properties: Record<string, unknown> = { name: u.name, description: u.longName, aliases: u.aliasNames, symbol: u.symbol, quantity: u.quantity };
  if (u.source !== undefined && u.source !== null) properties.source = u.source;
  if (u.sourceReference !== undefined && u.sourceReference !== null) properties.sourceReference = u.sourceReference;
  return { instanceType: 'node', space: UNITS_SPACE, externalId: u.externalId, sources: [{ source: UNIT_VIEW, properties }] };
}

let nodes: InstanceWriteItem[] | undefined;
let digest: string | undefined;
const unitNodes = () => (nodes ??= unitCatalog.units.map(unitNode));
const catalogDigest = () => (digest ??= createHash('sha256').update(JSON.stringify(unitNodes())).digest('base64url'));

const seeded = async (db: Pick<Queryable, 'get'>, projectId: number) =>
  (await db.get<{ digest: string }>(sql`SELECT digest FROM dm_seeds WHERE project_id = ${projectId} AND name = ${SEED}`))?.digest === catalogDigest();

/** Writes the unit nodes of the catalog into the project, in `db`'s transaction; `replace`, so each holds the catalog's values only. */
export async function seedUnitNodes(db: Queryable, services: Pick<Services, 'cursors' | 'now' | 'settings'>, projectId: number): Promise<void> {
  const system: Services = { db, reads: inProcessReader(db), cursors: services.cursors, now: services.now, settings: services.settings };
  const items = unitNodes();
  for (let at = 0; at < items.length; at += DM_LIMITS.instanceItems) {
    await applySystemInstances(db, system, projectId, { items: items.slice(at, at + DM_LIMITS.instanceItems), replace: true, autoCreateDirectRelations: false });
  }
  await db.run(sql`INSERT INTO dm_seeds (project_id, name, digest) VALUES (${projectId}, ${SEED}, ${catalogDigest()}) ON CONFLICT (project_id, name) DO UPDATE SET digest = excluded.digest`);
}

/** Projects whose unit nodes this process has made sure of (or is making sure of), per store. */
const ready = new WeakMap<Queryable, Map<number, Promise<void>>>();

/** Resolves once the project holds the unit nodes of this build's catalog (one check per project and process). */
export function ensureUnitNodes(services: Services, projectId: number): Promise<void> {
  const store = services.db;
  let projects = ready.get(store);
  if (!projects) ready.set(store, (projects = new Map()));
  let done = projects.get(projectId);
  if (done === undefined) {
    done = (async () => {
      if (await seeded(store, projectId)) return;
      await store.transaction(async (db) => {
        await holdLock(db, 'unitNodes', projectId);
        if (await seeded(db, projectId)) return;
        await seedUnitNodes(db, services, projectId);
      });
    })();
    projects.set(projectId, done);
    done.catch(() => projects.delete(projectId));
  }
  return done;
}
