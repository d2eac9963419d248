/** The workflows area: workflows, versions, executions run on the job runner, and triggers. */
import type { Area } from '../../http/area.js';
import { workflowRoutes } from './routes.js';
import { registerWorkflowJobs } from './runner.js';
import { workflowTables } from './tables.js';

export const workflowsArea: Area = {
  name: 'workflows',
  routes: workflowRoutes,
  tables: workflowTables,
  registerJobs: registerWorkflowJobs,
};
