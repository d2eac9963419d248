/**
 * The data point tables. Raw points live in chunks (one row holds up to a thousand consecutive points of one
 * series, packed by `chunk-codec.ts`), so that ingest writes a few rows per request and retrieval decodes
 * contiguous arrays instead of reading a row per point. Rollups hold precomputed summaries per series, level
 * and aligned UTC cell (15 minutes, 1 hour, 1 day; see `rollup-levels.ts`), a block of adjacent cells per
 * row, so that aggregates over long ranges read a row per block instead of every point.
 */
export const datapointsSchemaSql = `
CREATE TABLE datapoint_chunks (
  project_id INTEGER NOT NULL,
  series_id INTEGER NOT NULL,
  start_ts INTEGER NOT NULL,
  end_ts INTEGER NOT NULL,
  n INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (project_id, series_id, start_ts)
) WITHOUT ROWID;
CREATE TABLE datapoint_rollups (
  project_id INTEGER NOT NULL,
  series_id INTEGER NOT NULL,
  level INTEGER NOT NULL,
  block_start INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (project_id, series_id, level, block_start)
) WITHOUT ROWID;
`;
