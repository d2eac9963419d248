/** The extraction pipelines area: pipelines, their configuration revisions and their runs. */
import type { Area } from '../../http/area.js';
import { configRevisionModel, pipelineModel, runModel } from './model.js';
import { extpipeRoutes } from './routes.js';

export const extpipesArea: Area = {
  name: 'extraction pipelines',
  routes: extpipeRoutes,
  tables: [...pipelineModel.tables, ...configRevisionModel.tables, ...runModel.tables],
};
