import { randomBytes } from 'node:crypto';
import type { Db } from './db.js';
import { get, run } from './db.js';
import { sql } from './sql.js';
import type { Project } from '../http/route.js';

export function ensureProjects(db: Db, names: readonly string[], now: number): void {
  for (const name of names) run(db, sql`INSERT INTO projects (name, created_time) VALUES (${name}, ${now}) ON CONFLICT (name) DO NOTHING`);
}

export function findProject(db: Db, name: string): Project | undefined {
  return get<Project>(db, sql`SELECT id, name FROM projects WHERE name = ${name}`);
}

/** A secret shared by every process on this database (cursor signatures must verify on any of them). */
export function serverSecret(db: Db, key: string): Buffer {
  run(db, sql`INSERT INTO server_meta (key, value) VALUES (${key}, ${randomBytes(32).toString('hex')}) ON CONFLICT (key) DO NOTHING`);
  return Buffer.from(get<{ value: string }>(db, sql`SELECT value FROM server_meta WHERE key = ${key}`)!.value, 'hex');
}
