import { authSchemaSql, sessionParentsSql } from '../auth/schema.js';
import { assetsSchemaSql, assetTable } from '../resources/assets/store.js';
import { datapointsSchemaSql } from '../resources/datapoints/store-schema.js';
import { dataSetsSchemaSql, dataSetTable } from '../resources/datasets/store.js';
import { eventsExternalIdStartTimeSql, eventsSchemaSql, eventsStoredJsonSql, eventTable } from '../resources/events/store.js';
import { timeSeriesSchemaSql, timeSeriesTable } from '../resources/timeseries/store.js';
import { emptyCollectionsAbsentSql } from './items.js';

const core = `
CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_time INTEGER NOT NULL,
  config TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE server_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

/** Ordered schema migrations; the database's `user_version` counts how many have been applied. Append only. */
export const migrations: readonly string[] = [
  core + dataSetsSchemaSql + eventsSchemaSql,
  timeSeriesSchemaSql,
  assetsSchemaSql,
  authSchemaSql,
  datapointsSchemaSql,
  eventsExternalIdStartTimeSql,
  eventsStoredJsonSql,
  sessionParentsSql,
  [eventTable, assetTable, timeSeriesTable, dataSetTable].map(emptyCollectionsAbsentSql).join(''),
];
