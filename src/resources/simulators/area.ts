/** The simulators area: simulators, their integrations, models, routines, runs and logs. */
import type { Area } from '../../http/area.js';
import { SIMULATOR_MODELS } from './model.js';
import { simulatorRoutes } from './routes.js';

export const simulatorsArea: Area = {
  name: 'simulators',
  routes: simulatorRoutes,
  tables: SIMULATOR_MODELS.flatMap((m) => m.tables),
};
