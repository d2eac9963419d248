/** The functions area: functions made from zip files of code, their calls run in child processes, and schedules of calls. */
import type { Area } from '../../http/area.js';
import { registerFunctionJobs } from './jobs.js';
import { callModel, functionModel, scheduleModel } from './model.js';
import { functionRoutes } from './routes.js';
import { FUNCTIONS_SETTINGS } from './settings.js';

export const functionsArea: Area = {
  name: 'functions',
  routes: functionRoutes,
  tables: [...functionModel.tables, ...callModel.tables, ...scheduleModel.tables],
  config: FUNCTIONS_SETTINGS,
  registerJobs: registerFunctionJobs,
};
