/**
 * Events in SQL: tables, the queryable catalog, and the row <-> API mapping. All writes here run inside the
 * caller's transaction.
 */
import type { ResourceCatalog } from '../../query/catalog.js';
import { all, prepare, type Db } from '../../storage/db.js';
import { Sql, sql } from '../../storage/sql.js';

export const eventsSchemaSql = `
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  external_id TEXT,
  data_set_id INTEGER,
  start_time INTEGER,
  end_time INTEGER,
  type TEXT,
  subtype TEXT,
  description TEXT,
  source TEXT,
  metadata TEXT,
  asset_ids TEXT,
  created_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX events_external_id ON events (project_id, external_id);
CREATE INDEX events_created_time ON events (project_id, created_time);
CREATE INDEX events_last_updated_time ON events (project_id, last_updated_time);
CREATE INDEX events_start_time ON events (project_id, start_time);
CREATE INDEX events_end_time ON events (project_id, end_time);
CREATE INDEX events_type_start_time ON events (project_id, type, start_time);
CREATE INDEX events_subtype ON events (project_id, subtype);
CREATE INDEX events_source ON events (project_id, source);
CREATE INDEX events_data_set ON events (project_id, data_set_id);

CREATE TABLE event_metadata (
  event_id INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  key_lc TEXT NOT NULL,
  value TEXT,
  value_lc TEXT,
  PRIMARY KEY (event_id, key)
) WITHOUT ROWID;
CREATE INDEX event_metadata_value ON event_metadata (project_id, key_lc, value_lc);

CREATE TABLE event_assets (
  event_id INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  asset_id INTEGER NOT NULL,
  PRIMARY KEY (event_id, asset_id)
) WITHOUT ROWID;
CREATE INDEX event_assets_asset ON event_assets (project_id, asset_id);

CREATE VIRTUAL TABLE events_fts USING fts5 (description, content = 'events', content_rowid = 'id');
CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN new.description IS NOT NULL BEGIN
  INSERT INTO events_fts (rowid, description) VALUES (new.id, new.description);
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN old.description IS NOT NULL BEGIN
  INSERT INTO events_fts (events_fts, rowid, description) VALUES ('delete', old.id, old.description);
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF description ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, description) SELECT 'delete', old.id, old.description WHERE old.description IS NOT NULL;
  INSERT INTO events_fts (rowid, description) SELECT new.id, new.description WHERE new.description IS NOT NULL;
END;
`;

/** Metadata values longer than this are stored but cannot be filtered on (spec: up to 256 characters). */
export const FILTERABLE_METADATA_LENGTH = 256;

export const eventCatalog: ResourceCatalog = {
  noun: 'event',
  table: 'events',
  alias: 'e',
  properties: {
    id: { kind: 'integer', column: 'id', nullable: false },
    externalId: { kind: 'string', column: 'external_id', nullable: true, maxValueLength: 255, sortable: true },
    dataSetId: { kind: 'integer', column: 'data_set_id', nullable: true, sortable: true, aggregatable: true },
    startTime: { kind: 'integer', column: 'start_time', nullable: true, sortable: true },
    endTime: { kind: 'integer', column: 'end_time', nullable: true, sortable: true },
    createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
    lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
    type: { kind: 'string', column: 'type', nullable: true, maxValueLength: 64, sortable: true, aggregatable: true },
    subtype: { kind: 'string', column: 'subtype', nullable: true, maxValueLength: 64, sortable: true, aggregatable: true },
    source: { kind: 'string', column: 'source', nullable: true, maxValueLength: 128, sortable: true, aggregatable: true },
    description: {
      kind: 'string',
      column: 'description',
      nullable: true,
      maxValueLength: 255,
      search: { maxValueLength: 128 },
      sortable: true,
      aggregatable: true,
    },
    assetIds: { kind: 'integerArray', table: 'event_assets', itemColumn: 'event_id', valueColumn: 'asset_id', aggregatable: true },
  },
  metadata: { table: 'event_metadata', itemColumn: 'event_id', maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: 128 },
  fts: { table: 'events_fts' },
};

export interface EventRow {
  id: number;
  external_id: string | null;
  data_set_id: number | null;
  start_time: number | null;
  end_time: number | null;
  type: string | null;
  subtype: string | null;
  description: string | null;
  source: string | null;
  metadata: string | null;
  asset_ids: string | null;
  created_time: number;
  last_updated_time: number;
}

export interface Event {
  id: number;
  externalId?: string;
  dataSetId?: number;
  startTime?: number;
  endTime?: number;
  type?: string;
  subtype?: string;
  description?: string;
  metadata?: Record<string, string>;
  assetIds?: number[];
  source?: string;
  createdTime: number;
  lastUpdatedTime: number;
}

/** The values an event is stored from (API field names, null for absent). */
export interface EventValues {
  externalId: string | null;
  dataSetId: number | null;
  startTime: number | null;
  endTime: number | null;
  type: string | null;
  subtype: string | null;
  description: string | null;
  source: string | null;
  metadata: Record<string, string> | null;
  assetIds: number[] | null;
}

export const EVENT_COLUMNS =
  'e.id, e.external_id, e.data_set_id, e.start_time, e.end_time, e.type, e.subtype, e.description, e.source, e.metadata, e.asset_ids, e.created_time, e.last_updated_time';

export function toEvent(r: EventRow, includeMetadata = true): Event {
  const e: Event = { id: r.id } as Event;
  if (r.external_id !== null) e.externalId = r.external_id;
  if (r.data_set_id !== null) e.dataSetId = r.data_set_id;
  if (r.start_time !== null) e.startTime = r.start_time;
  if (r.end_time !== null) e.endTime = r.end_time;
  if (r.type !== null) e.type = r.type;
  if (r.subtype !== null) e.subtype = r.subtype;
  if (r.description !== null) e.description = r.description;
  if (r.metadata !== null && includeMetadata) e.metadata = JSON.parse(r.metadata);
  if (r.asset_ids !== null) e.assetIds = JSON.parse(r.asset_ids);
  if (r.source !== null) e.source = r.source;
  e.createdTime = r.created_time;
  e.lastUpdatedTime = r.last_updated_time;
  return e;
}

export function toValues(r: EventRow): EventValues {
  return {
    externalId: r.external_id,
    dataSetId: r.data_set_id,
    startTime: r.start_time,
    endTime: r.end_time,
    type: r.type,
    subtype: r.subtype,
    description: r.description,
    source: r.source,
    metadata: r.metadata === null ? null : JSON.parse(r.metadata),
    assetIds: r.asset_ids === null ? null : JSON.parse(r.asset_ids),
  };
}

export function eventsByIds(db: Db, projectId: number, ids: readonly number[]): Map<number, EventRow> {
  const out = new Map<number, EventRow>();
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const rows = all<EventRow>(db, sql`SELECT ${Sql.raw(EVENT_COLUMNS)} FROM events e WHERE e.project_id = ${projectId} AND e.id IN (${part})`);
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

function writeSideTables(db: Db, projectId: number, id: number, v: EventValues): void {
  if (v.metadata) {
    const insert = prepare(db, 'INSERT INTO event_metadata (event_id, project_id, key, key_lc, value, value_lc) VALUES (?, ?, ?, ?, ?, ?)');
    for (const [key, value] of Object.entries(v.metadata)) {
      const filterable = value.length <= FILTERABLE_METADATA_LENGTH;
      insert.run(id, projectId, key, key.toLowerCase(), filterable ? value : null, filterable ? value.toLowerCase() : null);
    }
  }
  if (v.assetIds) {
    const insert = prepare(db, 'INSERT INTO event_assets (event_id, project_id, asset_id) VALUES (?, ?, ?)');
    for (const assetId of v.assetIds) insert.run(id, projectId, assetId);
  }
}

function clearSideTables(db: Db, id: number): void {
  prepare(db, 'DELETE FROM event_metadata WHERE event_id = ?').run(id);
  prepare(db, 'DELETE FROM event_assets WHERE event_id = ?').run(id);
}

export function insertEvent(db: Db, projectId: number, v: EventValues, now: number): number {
  const result = prepare(
    db,
    `INSERT INTO events (project_id, external_id, data_set_id, start_time, end_time, type, subtype, description, source, metadata, asset_ids, created_time, last_updated_time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    projectId,
    v.externalId,
    v.dataSetId,
    v.startTime,
    v.endTime,
    v.type,
    v.subtype,
    v.description,
    v.source,
    v.metadata === null ? null : JSON.stringify(v.metadata),
    v.assetIds === null ? null : JSON.stringify(v.assetIds),
    now,
    now,
  );
  const id = Number(result.lastInsertRowid);
  writeSideTables(db, projectId, id, v);
  return id;
}

export function updateEvent(db: Db, projectId: number, id: number, v: EventValues, now: number): void {
  prepare(
    db,
    `UPDATE events SET external_id = ?, data_set_id = ?, start_time = ?, end_time = ?, type = ?, subtype = ?, description = ?,
       source = ?, metadata = ?, asset_ids = ?, last_updated_time = ? WHERE id = ?`,
  ).run(
    v.externalId,
    v.dataSetId,
    v.startTime,
    v.endTime,
    v.type,
    v.subtype,
    v.description,
    v.source,
    v.metadata === null ? null : JSON.stringify(v.metadata),
    v.assetIds === null ? null : JSON.stringify(v.assetIds),
    now,
    id,
  );
  clearSideTables(db, id);
  writeSideTables(db, projectId, id, v);
}

export function deleteEvent(db: Db, id: number): void {
  clearSideTables(db, id);
  prepare(db, 'DELETE FROM events WHERE id = ?').run(id);
}
