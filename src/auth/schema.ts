/**
 * The tables of authentication, as migrations: the projects' authentication version (bumped whenever
 * what a project's tokens grant changes, so every process drops what it cached), groups and sessions, then
 * the sessions' parents. Kept free of imports so the migration list can load it without import cycles.
 */
export const authSchemaSql = `
ALTER TABLE projects ADD COLUMN auth_version INTEGER NOT NULL DEFAULT 0;
CREATE TABLE access_groups (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  name TEXT NOT NULL,
  source_id TEXT,
  members TEXT,
  capabilities TEXT NOT NULL,
  metadata TEXT,
  attributes TEXT,
  created_time INTEGER NOT NULL
);
CREATE INDEX access_groups_project ON access_groups (project_id, id);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  subject TEXT NOT NULL,
  client_id TEXT,
  claims TEXT NOT NULL,
  nonce_hash TEXT,
  nonce_expires INTEGER NOT NULL,
  key_hash TEXT,
  creation_time INTEGER NOT NULL,
  expiration_time INTEGER NOT NULL,
  max_expiration_time INTEGER,
  extendable INTEGER NOT NULL
);
CREATE INDEX sessions_project ON sessions (project_id, id);
CREATE UNIQUE INDEX sessions_nonce ON sessions (nonce_hash);
`;

/**
 * A session created with another session's access token records that session as its parent: it never
 * outlives it and is revoked with it.
 */
export const sessionParentsSql = `
ALTER TABLE sessions ADD COLUMN parent_id INTEGER REFERENCES sessions (id);
CREATE INDEX sessions_parent ON sessions (parent_id);
`;
