/**
 * The data point tables. Raw points live in chunks (one row holds up to a thousand consecutive points of one
 * series, packed by `chunk-codec.ts`), so that ingest writes a few rows per request and retrieval decodes
 * contiguous arrays instead of reading a row per point. Rollups hold precomputed summaries per series, level
 * and aligned UTC cell (15 minutes, 1 hour, 1 day; see `rollup-levels.ts`), a block of adjacent cells per
 * row, so that aggregates over long ranges read a row per block instead of every point.
 */
import type { TableDef } from '../../storage/schema.js';

export const datapointTables: readonly TableDef[] = [
  {
    name: 'datapoint_chunks',
    columns: {
      project_id: { type: 'integer', notNull: true },
      series_id: { type: 'integer', notNull: true },
      start_ts: { type: 'integer', notNull: true },
      end_ts: { type: 'integer', notNull: true },
      n: { type: 'integer', notNull: true },
      data: { type: 'blob', notNull: true },
    },
    primaryKey: ['project_id', 'series_id', 'start_ts'],
    withoutRowid: true,
  },
  {
    name: 'datapoint_rollups',
    columns: {
      project_id: { type: 'integer', notNull: true },
      series_id: { type: 'integer', notNull: true },
      level: { type: 'integer', notNull: true },
      block_start: { type: 'integer', notNull: true },
      data: { type: 'blob', notNull: true },
    },
    primaryKey: ['project_id', 'series_id', 'level', 'block_start'],
    withoutRowid: true,
  },
];
