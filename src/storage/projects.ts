import { randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import { all, get, run } from './db.js';
import { sql } from './sql.js';
import type { Project } from '../http/route.js';
import { ConfigError } from '../config.js';

export function ensureProjects(db: Db, names: readonly string[], now: number): void {
  for (const name of names) run(db, sql`INSERT INTO projects (name, created_time) VALUES (${name}, ${now}) ON CONFLICT (name) DO NOTHING`);
}

export function findProject(db: Db, name: string): Project | undefined {
  return get<Project>(db, sql`SELECT id, name FROM projects WHERE name = ${name}`);
}

/**
 * A project with its authentication version: anything cached about its principals (configuration, groups,
 * resolved tokens) is valid for one version, so a change made by any process is seen by every process
 * (by this one at once, by others within PROJECT_AUTH_FRESH_MS).
 */
export interface ProjectAuthRow extends Project {
  authVersion: number;
}

export function findProjectAuth(db: Db, name: string): ProjectAuthRow | undefined {
  return get<ProjectAuthRow>(db, sql`SELECT id, name, auth_version AS authVersion FROM projects WHERE name = ${name}`);
}

/**
 * How long a process answers requests from a project's row before reading it again. Reading it costs a
 * SQLite read transaction (file-lock system calls): a quarter of a refused request's CPU and a sixth of a
 * GET by id's, measured. Changes made through this process (bumpAuthVersion) clear the rows at once.
 */
export const PROJECT_AUTH_FRESH_MS = 250;

const recentProjects = new WeakMap<Db, Map<string, { row: ProjectAuthRow; until: number }>>();

/** findProjectAuth for the request path: a row read in the last PROJECT_AUTH_FRESH_MS, else a fresh read. */
export function findProjectAuthRecent(db: Db, name: string): ProjectAuthRow | undefined {
  let rows = recentProjects.get(db);
  if (rows === undefined) recentProjects.set(db, (rows = new Map()));
  const now = performance.now();
  const hit = rows.get(name);
  if (hit !== undefined && hit.until > now) return hit.row;
  const row = findProjectAuth(db, name);
  // Unknown names are not kept: a project created meanwhile is found at once, and clients choose the names.
  if (row === undefined) rows.delete(name);
  else rows.set(name, { row, until: now + PROJECT_AUTH_FRESH_MS });
  return row;
}

export function allProjectsAuth(db: Db): ProjectAuthRow[] {
  return all<ProjectAuthRow>(db, sql`SELECT id, name, auth_version AS authVersion FROM projects ORDER BY name`);
}

/** The project's stored configuration object (`projects.config`). */
export function readProjectConfig(db: Db, projectId: number): Record<string, unknown> {
  const row = get<{ name: string; config: string }>(db, sql`SELECT name, config FROM projects WHERE id = ${projectId}`);
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
export function writeProjectConfigMember(db: Db, projectId: number, key: string, value: unknown): void {
  const config = readProjectConfig(db, projectId);
  if (value === undefined) delete config[key];
  else config[key] = value;
  run(db, sql`UPDATE projects SET config = ${JSON.stringify(config)} WHERE id = ${projectId}`);
}

/** Invalidates every cached principal of the project, in this process and in others. */
export function bumpAuthVersion(db: Db, projectId: number): void {
  run(db, sql`UPDATE projects SET auth_version = auth_version + 1 WHERE id = ${projectId}`);
  recentProjects.get(db)?.clear();
}

/** A secret shared by every process on this database (cursor signatures must verify on any of them). */
export function serverSecret(db: Db, key: string): Buffer {
  run(db, sql`INSERT INTO server_meta (key, value) VALUES (${key}, ${randomBytes(32).toString('hex')}) ON CONFLICT (key) DO NOTHING`);
  return Buffer.from(get<{ value: string }>(db, sql`SELECT value FROM server_meta WHERE key = ${key}`)!.value, 'hex');
}

/**
 * The throttling overrides stored with projects (the `limits` member of `projects.config`), unchecked: of every
 * project, or of the one named. Projects without one are left out.
 */
export function storedProjectLimits(db: Db, name?: string): Array<{ name: string; limits: unknown }> {
  const rows =
    name === undefined
      ? all<{ name: string; config: string }>(db, sql`SELECT name, config FROM projects`)
      : all<{ name: string; config: string }>(db, sql`SELECT name, config FROM projects WHERE name = ${name}`);
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
