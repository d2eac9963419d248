/**
 * Projects and the server's own settings: the tables every other table hangs from, and the reads the request
 * path makes of them.
 */
import { randomBytes } from 'node:crypto';
import { allocateIds } from './ids.js';
import type { TableDef } from './schema.js';
import { sql } from './sql.js';
import type { Queryable } from './store.js';
import { ConfigError } from '../config.js';

/** A project: the scope of every item, named in every path. */
export interface Project {
  id: number;
  name: string;
}

export const coreTables: readonly TableDef[] = [
  {
    name: 'projects',
    columns: {
      id: { type: 'id' },
      name: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
      config: { type: 'text', notNull: true, default: "'{}'" },
      // Bumped whenever what the project's tokens grant changes, so every process drops what it cached.
      auth_version: { type: 'integer', notNull: true, default: 0 },
    },
    indexes: [{ name: 'projects_name', columns: ['name'], unique: true }],
  },
  { name: 'server_meta', columns: { key: { type: 'text', notNull: true }, value: { type: 'text', notNull: true } }, primaryKey: ['key'] },
];

export async function ensureProjects(db: Queryable, names: readonly string[], now: number): Promise<void> {
  await db.transaction(async (tx) => {
    for (const name of names) {
      if (await tx.get(sql`SELECT id FROM projects WHERE name = ${name}`)) continue;
      const [id] = await allocateIds(tx, 'projects', 1);
      await tx.run(sql`INSERT INTO projects (id, name, created_time) VALUES (${id}, ${name}, ${now}) ON CONFLICT (name) DO NOTHING`);
    }
  });
}

/**
 * A project with its authentication version: anything cached about its principals (configuration, groups,
 * resolved tokens) is valid for one version, so a change made by any process is seen by every process
 * (by this one at once, by others within PROJECT_AUTH_FRESH_MS).
 */
export interface ProjectAuthRow extends Project {
  authVersion: number;
}

export async function findProjectAuth(db: Queryable, name: string): Promise<ProjectAuthRow | undefined> {
  return db.get<ProjectAuthRow>(sql`SELECT id, name, auth_version AS "authVersion" FROM projects WHERE name = ${name}`);
}

/**
 * How long a process answers requests from a project's row before reading it again. Reading it costs a
 * SQLite read transaction (file-lock system calls; on PostgreSQL a round trip): a quarter of a refused
 * request's CPU and a sixth of a GET by id's, measured on SQLite. Changes made through this process
 * (bumpAuthVersion) clear the rows at once.
 */
export const PROJECT_AUTH_FRESH_MS = 250;

const recentProjects = new WeakMap<Queryable, Map<string, { row: ProjectAuthRow; until: number; generation: number }>>();
/** Bumped when this process changes a project's authentication: rows kept from before are read again. */
let generation = 0;

/**
 * findProjectAuth for the request path: a row read in the last PROJECT_AUTH_FRESH_MS (answered without a
 * promise), else a promise of a fresh read.
 */
export function findProjectAuthRecent(db: Queryable, name: string): ProjectAuthRow | undefined | Promise<ProjectAuthRow | undefined> {
  const rows = recentProjects.get(db);
  const hit = rows?.get(name);
  if (hit !== undefined && hit.until > performance.now() && hit.generation === generation) return hit.row;
  return readProjectAuth(db, name);
}

async function readProjectAuth(db: Queryable, name: string): Promise<ProjectAuthRow | undefined> {
  let rows = recentProjects.get(db);
  if (rows === undefined) recentProjects.set(db, (rows = new Map()));
  const now = performance.now();
  const row = await findProjectAuth(db, name);
  // Unknown names are not kept: a project created meanwhile is found at once, and clients choose the names.
  if (row === undefined) rows.delete(name);
  else rows.set(name, { row, until: now + PROJECT_AUTH_FRESH_MS, generation });
  return row;
}

export async function allProjectsAuth(db: Queryable): Promise<ProjectAuthRow[]> {
  return db.all<ProjectAuthRow>(sql`SELECT id, name, auth_version AS "authVersion" FROM projects ORDER BY name`);
}

/** The project's stored configuration object (`projects.config`). */
export async function readProjectConfig(db: Queryable, projectId: number): Promise<Record<string, unknown>> {
  const row = await db.get<{ name: string; config: string }>(sql`SELECT name, config FROM projects WHERE id = ${projectId}`);
  if (!row) return {};
  let config: unknown;
  try {
    config = JSON.parse(row.config);
  } catch {
    throw new ConfigError(`project "${row.name}": the stored projects.config is not valid JSON`);
  }
  return typeof config === 'object' && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : {};
}

/** Sets one member of the project's configuration (other members, such as `limits`, are kept). */
export async function writeProjectConfigMember(db: Queryable, projectId: number, key: string, value: unknown): Promise<void> {
  await db.transaction(async (tx) => {
    const config = await readProjectConfig(tx, projectId);
    if (value === undefined) delete config[key];
    else config[key] = value;
    await tx.run(sql`UPDATE projects SET config = ${JSON.stringify(config)} WHERE id = ${projectId}`);
  });
}

/** Invalidates every cached principal of the project, in this process and in others. */
export async function bumpAuthVersion(db: Queryable, projectId: number): Promise<void> {
  await db.run(sql`UPDATE projects SET auth_version = auth_version + 1 WHERE id = ${projectId}`);
  forgetRecentProjects();
}

/** Drops the project rows this process keeps (after it changed one): the next request reads them again. */
export function forgetRecentProjects(): void {
  generation++;
}

/** A secret shared by every process on this database (cursor signatures must verify on any of them). */
export async function serverSecret(db: Queryable, key: string): Promise<Buffer> {
  return Buffer.from(await sharedValue(db, key, () => randomBytes(32).toString('hex')), 'hex');
}

/**
 * A value shared by every process on this database under `key` (secrets, keys): the stored one, or `make()`
 * stored now if there is none yet (when two processes start at once, both read the one that was stored first).
 */
export async function sharedValue(db: Queryable, key: string, make: () => string | Promise<string>): Promise<string> {
  const found = await db.get<{ value: string }>(sql`SELECT value FROM server_meta WHERE key = ${key}`);
  if (found) return found.value;
  const value = await make();
  await db.run(sql`INSERT INTO server_meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO NOTHING`);
  return (await db.get<{ value: string }>(sql`SELECT value FROM server_meta WHERE key = ${key}`))!.value;
}

/**
 * The throttling overrides stored with projects (the `limits` member of `projects.config`), unchecked: of every
 * project, or of the one named. Projects without one are left out.
 */
export async function storedProjectLimits(db: Queryable, name?: string): Promise<Array<{ name: string; limits: unknown }>> {
  const rows =
    name === undefined
      ? await db.all<{ name: string; config: string }>(sql`SELECT name, config FROM projects`)
      : await db.all<{ name: string; config: string }>(sql`SELECT name, config FROM projects WHERE name = ${name}`);
  const out: Array<{ name: string; limits: unknown }> = [];
  for (const row of rows) {
    let config: unknown;
    try {
      config = JSON.parse(row.config);
    } catch {
      throw new ConfigError(`project "${row.name}": the stored projects.config is not valid JSON`);
    }
    const limits = typeof config === 'object' && config !== null ? (config as { limits?: unknown }).limits : undefined;
    if (limits !== undefined) out.push({ name: row.name, limits });
  }
  return out;
}
