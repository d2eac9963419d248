/**
 * Where streams and records are kept.
 *
 * `streams`: one row per stream, with its settings as created from its template and three counters the
 * writes of its records keep in their transaction: `seq`, the last position handed out in the stream's feed,
 * and `record_count` and `bytes`, what the stream holds against its limits. A deleted stream keeps its row,
 * `deleted_time` set, until its records are purged; its identifier is free for a new stream at once.
 *
 * `records`: one table for the records of every stream, keyed by `(project_id, stream_id, seq)`, so that a
 * stream's records lie together in the order they were written, new ones at its end: ingest appends, the
 * sync feed is a range of the key, and purging a stream or the expired head of it deletes ranges. Every write
 * of a record (ingest, upsert, delete) gives it the next position of its stream, `seq`. Its properties are one
 * document, `{space: {container: {property: value}}}`, each value in the form a container column holds it
 * (models/container-tables.ts), which the filter compiler reads field by field (record-sql.ts). A record of a
 * mutable stream (`keyed` = 1; an immutable stream's have 0) is unique by space and external id, and a deleted one stays as a tombstone
 * (`state` 2, its document kept for sync's filter, its size 0) for the sync feed; an immutable stream's records may repeat an identifier.
 * On PostgreSQL the table is partitioned by stream, and an immutable stream's partition again by time
 * (partitions.ts), so that deleting a stream, or the expired head of one, drops partitions.
 */
import type { TableDef } from '../../storage/schema.js';

/** `records.state`: what the record's last write was. */
export const RECORD_STATE = { created: 0, updated: 1, deleted: 2 } as const;

export const recordsTable: TableDef = {
  name: 'records',
  columns: {
    project_id: { type: 'integer', notNull: true },
    stream_id: { type: 'integer', notNull: true },
    seq: { type: 'integer', notNull: true },
    space: { type: 'text', notNull: true },
    external_id: { type: 'text', notNull: true },
    created_time: { type: 'integer', notNull: true },
    last_updated_time: { type: 'integer', notNull: true },
    state: { type: 'integer', notNull: true },
    keyed: { type: 'integer' },
    doc: { type: 'document' },
    /** The document's size in bytes, as the stream's `bytes` counts it. */
    size: { type: 'integer', notNull: true },
  },
  primaryKey: ['project_id', 'stream_id', 'seq'],
  withoutRowid: true,
  partitionedBy: 'stream_id',
  indexes: [
    { name: 'records_time', columns: ['project_id', 'stream_id', 'last_updated_time', 'seq'] },
    { name: 'records_key', columns: ['project_id', 'stream_id', 'space', 'external_id'], unique: true, where: 'keyed = 1' },
    // An immutable stream's records by identifier, for the ingest that discards duplicates.
    { name: 'records_ids', columns: ['project_id', 'stream_id', 'space', 'external_id'], where: 'keyed = 0' },
    // What the purge of old tombstones reads, a batch at a time, without passing over live records.
    { name: 'records_tombstones', columns: ['project_id', 'stream_id', 'last_updated_time'], where: 'state = 2' },
  ],
};

export const streamTables: readonly TableDef[] = [
  {
    name: 'streams',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true },
      external_id: { type: 'text', notNull: true },
      template: { type: 'text', notNull: true },
      mutable: { type: 'integer', notNull: true },
      settings: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
      deleted_time: { type: 'integer' },
      seq: { type: 'integer', notNull: true, default: 0 },
      record_count: { type: 'integer', notNull: true, default: 0 },
      bytes: { type: 'integer', notNull: true, default: 0 },
    },
    indexes: [{ name: 'streams_key', columns: ['project_id', 'external_id'], unique: true, where: 'deleted_time IS NULL' }],
  },
  recordsTable,
];
