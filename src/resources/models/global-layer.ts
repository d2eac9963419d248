/**
 * The global layer: the system data models (the core data model and the others real projects hold,
 * core-model.ts), stored once per database under GLOBAL_PROJECT_ID, which every project reads as its own
 * (`isGlobal: true`) and no request can change.
 *
 * Stored once rather than copied into each project: a container is a table (`dmc_<id>`) whose rows are keyed
 * by project, so one table per core container serves every project, and creating a project costs nothing.
 *
 * Seeded when a process first serves a data modeling request, not at migration: seeding costs a tenth of a
 * second on SQLite and half a second on PostgreSQL (29 tables with their indexes), which a database that never
 * sees data modeling need not pay. The seeded catalog's digest is kept in `server_meta`; a process whose
 * catalog differs applies it again (applying the same definitions changes nothing), under a lock so that
 * processes starting together seed once.
 */
import { createHash } from 'node:crypto';
import type { ApiRoute } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { createCursorCodec } from '../../query/cursor.js';
import { holdLock } from '../../storage/locks.js';
import { inProcessReader } from '../../storage/read-pool.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { coreModelRequests, systemModels } from './core-model.js';
import { GLOBAL_PROJECT_ID } from './schema-store.js';
import { applyContainers, applyDataModels, applySpaces, applyViews } from './schema-service.js';
import { ensureSystemNodes } from './system-nodes.js';
import { sectionValues } from '../../config.js';

const META_KEY = 'global-layer';

let digest: string | undefined;
const catalogDigest = (): string => (digest ??= createHash('sha256').update(JSON.stringify(systemModels())).digest('base64url'));

/** Applies the core data model to the global layer, in `db`'s transaction. */
export async function seedCoreModel(db: Queryable, now: number): Promise<void> {
  // Outside any request: no access scope, and no cursor is issued.
  const services: Services = { db, reads: inProcessReader(db), cursors: createCursorCodec(Buffer.alloc(32)), now: () => now, settings: sectionValues() };
  for (const r of coreModelRequests(systemModels())) {
    if (r.kind === 'spaces') await applySpaces(services, GLOBAL_PROJECT_ID, r.body.items);
    else if (r.kind === 'containers') await applyContainers(services, GLOBAL_PROJECT_ID, r.body.items);
    else if (r.kind === 'views') await applyViews(services, GLOBAL_PROJECT_ID, r.body.items);
    else await applyDataModels(services, GLOBAL_PROJECT_ID, r.body.items);
  }
}

const seeded = (db: Queryable) => db.get<{ value: string }>(sql`SELECT value FROM server_meta WHERE key = ${META_KEY}`).then((r) => r?.value === catalogDigest());

const ready = new WeakMap<Queryable, Promise<void>>();

/** Resolves once the store holds the global layer of this build's catalog (at most one seeding per store and process). */
export function ensureGlobalLayer(services: Services): Promise<void> {
  const store = services.db;
  let done = ready.get(store);
  if (done === undefined) {
    done = (async () => {
      if (await seeded(store)) return;
      await store.transaction(async (db) => {
        await holdLock(db, 'globalLayer');
        if (await seeded(db)) return;
        await seedCoreModel(db, services.now());
        await db.run(sql`DELETE FROM server_meta WHERE key = ${META_KEY}`);
        await db.run(sql`INSERT INTO server_meta (key, value) VALUES (${META_KEY}, ${catalogDigest()})`);
      });
    })();
    ready.set(store, done);
    done.catch(() => ready.delete(store));
  }
  return done;
}

/**
 * The route with the global layer, and then the project's system nodes (which are written through its views),
 * made sure of before its handler runs.
 */
export function withGlobalLayer(def: ApiRoute): ApiRoute {
  const handler = def.handler;
  return {
    ...def,
    handler: async (ctx) => {
      await ensureGlobalLayer(ctx.services);
      await ensureSystemNodes(ctx.services, ctx.project.id);
      return handler(ctx);
    },
  };
}
