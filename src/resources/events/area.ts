/** The events area: its operations, its tables, and the steps over rows earlier builds wrote. */
import type { Area } from '../../http/area.js';
import { renderEmptyMetadata, renderMissingJson } from '../../storage/items.js';
import { emptyCollectionsStep } from '../model.js';
import { eventModel } from './model.js';
import { eventRoutes } from './routes.js';

export const eventsArea: Area = {
  name: 'events',
  routes: eventRoutes,
  tables: eventModel.tables,
  steps: [
    // Events came to keep their rendered JSON; rows written before have none.
    { version: 7, run: (db) => renderMissingJson(db, eventModel.table) },
    emptyCollectionsStep(eventModel),
    // Metadata came to be given as {} when there is none, in the rendered JSON too.
    { version: 14, run: (db) => renderEmptyMetadata(db, eventModel.table) },
  ],
};
