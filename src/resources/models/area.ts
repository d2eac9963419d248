/** Data modeling: spaces, containers, views, data models and instances, with its configuration section. */
import type { Area } from '../../http/area.js';
import { registerContainerChecks } from './container-checks.js';
import { rekeyContainerTables } from './container-tables.js';
import { modelRoutes } from './routes.js';
import { MODELS_SETTINGS } from './settings.js';
import { dmTables } from './store-schema.js';

export const modelsArea: Area = {
  name: 'data modeling',
  routes: modelRoutes,
  tables: dmTables,
  // SQLite container tables came to be keyed by the instance id (container-tables.ts).
  steps: [{ version: 13, run: rekeyContainerTables }],
  config: MODELS_SETTINGS,
  registerJobs: registerContainerChecks,
};
