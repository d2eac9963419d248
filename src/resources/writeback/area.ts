/** The SAP writeback area: SAP instances, their endpoints, mappings, and writeback requests sent by jobs. */
import type { Area } from '../../http/area.js';
import { registerWritebackJobs } from './jobs.js';
import { endpointModel, instanceModel, mappingModel, requestModel } from './model.js';
import { writebackRoutes } from './routes.js';

export const writebackArea: Area = {
  name: 'SAP writeback',
  routes: writebackRoutes,
  tables: [...instanceModel.tables, ...endpointModel.tables, ...mappingModel.tables, ...requestModel.tables],
  registerJobs: registerWritebackJobs,
};
