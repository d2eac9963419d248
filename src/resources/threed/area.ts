/** The 3D area: models, revisions processed from glTF files into node trees, asset mappings, 3D files. */
import type { Area } from '../../http/area.js';
import { jobTables } from './jobs.js';
import { threedTables } from './model.js';
import { registerThreedJobs } from './processing.js';
import { threedRoutes } from './routes.js';

export const threedArea: Area = {
  name: '3D',
  routes: threedRoutes,
  tables: [...threedTables, ...jobTables],
  registerJobs: registerThreedJobs,
};
