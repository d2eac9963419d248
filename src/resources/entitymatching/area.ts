/** The entity matching area: models fitted from sources and targets, refits, and predictions, as durable jobs. */
import type { Area } from '../../http/area.js';
import { entityMatchingModel } from './model.js';
import { entityMatchingRoutes } from './routes.js';
import { registerEntityMatchingJobs } from './service.js';

export const entityMatchingArea: Area = {
  name: 'entity matching',
  routes: entityMatchingRoutes,
  tables: entityMatchingModel.tables,
  registerJobs: registerEntityMatchingJobs,
};
