/**
 * Everything this build stores: the tables of every module and the data steps that rewrite rows written by
 * earlier builds (see storage/migrate.ts). Storage knows none of the resources; they are gathered here.
 */
import { authTables } from '../auth/schema.js';
import { emptyCollectionsAbsent, renderEmptyMetadata, renderMissingJson } from '../storage/items.js';
import type { Schema } from '../storage/migrate.js';
import { rebuildIdSuffixedIndexes } from '../storage/schema.js';
import { coreTables } from '../storage/projects.js';
import { platformTables } from '../storage/platform-tables.js';
import { assetModel } from './assets/model.js';
import { datapointTables } from './datapoints/store-schema.js';
import { dataProductModel, dataProductVersionModel } from './dataproducts/model.js';
import { dataSetModel } from './datasets/model.js';
import { eventModel } from './events/model.js';
import { rekeyContainerTables } from './models/container-tables.js';
import { dmTables } from './models/store-schema.js';
import { timeSeriesModel } from './timeseries/model.js';

const itemModels = [eventModel, dataSetModel, timeSeriesModel, assetModel, dataProductModel, dataProductVersionModel];

export function appSchema(): Schema {
  const tables = [...coreTables, ...platformTables, ...authTables, ...itemModels.flatMap((m) => m.tables), ...datapointTables, ...dmTables];
  return {
    tables,
    steps: [
      // Events came to keep their rendered JSON; rows written before have none.
      { version: 7, run: (db) => renderMissingJson(db, eventModel.table) },
      // Empty lists and maps came to be stored as absent.
      {
        version: 9,
        async run(db) {
          for (const m of itemModels) await emptyCollectionsAbsent(db, m.table);
        },
      },
      // PostgreSQL indexes came to end with the id, as SQLite's do (storage/schema.ts indexColumns).
      { version: 12, run: (db) => rebuildIdSuffixedIndexes(db, tables) },
      // SQLite container tables came to be keyed by the instance id (models/container-tables.ts).
      { version: 13, run: rekeyContainerTables },
      // Metadata came to be given as {} when there is none; events keep their rendered JSON.
      { version: 14, run: (db) => renderEmptyMetadata(db, eventModel.table) },
    ],
  };
}
