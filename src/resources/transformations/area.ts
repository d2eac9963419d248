/** The transformations area: transformations, the jobs that run their SQL, schedules, query previews, notifications and external data sources. */
import type { Area } from '../../http/area.js';
import { dataSourceModel, notificationModel, scheduleModel, transformationJobModel, transformationModel } from './model.js';
import { transformationRoutes } from './routes.js';
import { registerTransformationJobs } from './runner.js';

export const transformationsArea: Area = {
  name: 'transformations',
  routes: transformationRoutes,
  tables: [...transformationModel.tables, ...transformationJobModel.tables, ...scheduleModel.tables, ...notificationModel.tables, ...dataSourceModel.tables],
  registerJobs: registerTransformationJobs,
};
